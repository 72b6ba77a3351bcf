#!/usr/bin/env python3
"""btf_of_image.py -- the kernel's BTF (.BTF, raw) out of a boot image with no section headers (arm64 Image)

Usage: btf_of_image.py IMAGE OUT. A Debian arm64 vmlinuz is a raw Image (maybe gzip'ed): its BTF
blob lies between __start_BTF and __stop_BTF with no ELF to name it, so it is found by its header
(include/uapi/linux/btf.h: magic 0xeB9F, version 1, hdr_len 24) and checked: type section first,
string section NUL-delimited, the whole inside the image. The biggest blob that passes is the kernel's.
"""
import gzip
import struct
import sys

HDR = struct.Struct('<HBBIIIII')
MAGIC = b'\x9f\xeb\x01\x00\x18\x00\x00\x00'


def blobs(img):
    at = img.find(MAGIC)
    while at >= 0:
        if at + HDR.size <= len(img):
            _, _, _, hdr_len, type_off, type_len, str_off, str_len = HDR.unpack_from(img, at)
            end = at + hdr_len + str_off + str_len
            strs = at + hdr_len + str_off
            if (type_off == 0 and str_off >= type_len and str_len > 0 and end <= len(img)
                    and img[strs] == 0 and img[end - 1] == 0):
                yield img[at:end]
        at = img.find(MAGIC, at + 1)


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: btf_of_image.py IMAGE OUT')
    with open(sys.argv[1], 'rb') as f:
        img = f.read()
    if img[:2] == b'\x1f\x8b':
        img = gzip.decompress(img)
    best = max(blobs(img), key=len, default=None)
    if best is None:
        sys.exit(f'{sys.argv[1]}: no BTF found (a kernel built without CONFIG_DEBUG_INFO_BTF?)')
    with open(sys.argv[2], 'wb') as f:
        f.write(best)


if __name__ == '__main__':
    main()
