# otlp_decode.py -- decodes OTLP profile exports with Python classes protoc generated from the published .proto
#
# Usage: otlp_decode.py GENERATED_DIR BODY... ; prints one JSON object per body:
# service (resource service.name), resource (all resource attributes),
# types (sample_type "type/unit" per Profile), totals (sum of values per
# Profile), leaf (value of the first Profile by leaf function name),
# time_nanos, duration_nanos, links (span_id -> trace_id in hex, of the
# first Profile's samples that have a link, and the span_id attribute each
# such sample has), and errors: every dictionary rule of the spec the body
# breaks (zero values at index 0, indexes in range).
import json
import sys

sys.path.insert(0, sys.argv[1])
from opentelemetry.proto.collector.profiles.v1development import profiles_service_pb2  # noqa: E402


def check_dictionary(d, errs):
    zeros = [("mapping_table", d.mapping_table), ("location_table", d.location_table),
             ("function_table", d.function_table), ("attribute_table", d.attribute_table),
             ("stack_table", d.stack_table)]
    for name, table in zeros:
        if not table or table[0].ByteSize() != 0:
            errs.append("%s[0] is not the zero value" % name)
    if not d.string_table or d.string_table[0] != "":
        errs.append('string_table[0] is not ""')
    ns = len(d.string_table)
    for f in d.function_table:
        if not (0 <= f.name_strindex < ns and 0 <= f.filename_strindex < ns):
            errs.append("function string index out of range")
            break
    for loc in d.location_table:
        if not 0 <= loc.mapping_index < len(d.mapping_table):
            errs.append("location mapping index out of range")
            break
        for line in loc.lines:
            if not 0 <= line.function_index < len(d.function_table):
                errs.append("line function index out of range")
                break
    for st in d.stack_table:
        if any(not 0 < i < len(d.location_table) for i in st.location_indices):
            errs.append("stack location index out of range")
            break


def leaf_name(d, stack_index):
    st = d.stack_table[stack_index]
    if not st.location_indices:
        return ""
    loc = d.location_table[st.location_indices[0]]
    if not loc.lines:
        return "[unsymbolized]"
    # the innermost line of the leaf location (callee first)
    return d.string_table[d.function_table[loc.lines[0].function_index].name_strindex]


def decode(path):
    req = profiles_service_pb2.ExportProfilesServiceRequest()
    req.ParseFromString(open(path, "rb").read())
    d = req.dictionary
    errs = []
    check_dictionary(d, errs)
    out = {"types": [], "totals": [], "leaf": {}, "links": {}, "link_attrs": {}, "errors": errs}
    for rp in req.resource_profiles:
        attrs = {kv.key: kv.value.string_value for kv in rp.resource.attributes}
        out["resource"] = attrs
        out["service"] = attrs.get("service.name", "")
        for sp in rp.scope_profiles:
            for i, p in enumerate(sp.profiles):
                t = "%s/%s" % (d.string_table[p.sample_type.type_strindex],
                               d.string_table[p.sample_type.unit_strindex])
                out["types"].append(t)
                out["totals"].append(sum(sum(s.values) for s in p.samples))
                out["time_nanos"], out["duration_nanos"] = p.time_unix_nano, p.duration_nano
                for s in p.samples:
                    if not 0 < s.stack_index < len(d.stack_table):
                        errs.append("sample stack index out of range")
                        continue
                    if any(not 0 < a < len(d.attribute_table) for a in s.attribute_indices):
                        errs.append("sample attribute index out of range")
                    if not 0 <= s.link_index < len(d.link_table):
                        errs.append("sample link index out of range")
                    elif i == 0 and s.link_index:
                        link = d.link_table[s.link_index]
                        out["links"][link.span_id.hex()] = link.trace_id.hex()
                        attrs = {d.string_table[d.attribute_table[a].key_strindex]:
                                 d.attribute_table[a].value.string_value for a in s.attribute_indices}
                        out["link_attrs"][link.span_id.hex()] = attrs.get("span_id", "")
                    if i == 0:
                        name = leaf_name(d, s.stack_index)
                        out["leaf"][name] = out["leaf"].get(name, 0) + sum(s.values)
    return out


for body in sys.argv[2:]:
    print(json.dumps(decode(body)))
