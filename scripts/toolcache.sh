# Sourced by the scripts that put a tool the tests start into the cache
# outside the checkout (objectstore.sh, stripemock.sh):
#   ${COMPANYDOCS_CACHE:-$HOME/.cache/companydocs}/bin/NAME
# with NAME.version beside it naming the version it was built from
# (internal/toolcache finds the same path from Go).

# toolcache_open NAME VERSION sets bindir, bin and stamp; when the cached
# binary is of VERSION it prints its path and exits, else it makes a
# work directory ($work, removed on exit).
toolcache_open() {
	bindir="${COMPANYDOCS_CACHE:-$HOME/.cache/companydocs}/bin"
	bin="$bindir/$1"
	stamp="$bindir/$1.version"
	if [[ -x $bin && -f $stamp && $(<"$stamp") == "$2" ]]; then
		echo "$bin"
		exit 0
	fi
	mkdir -p "$bindir"
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
}

# toolcache_keep BUILT VERSION moves the built binary into the cache,
# stamps its version and prints its path.
toolcache_keep() {
	mv "$1" "$bin"
	echo "$2" >"$stamp"
	echo "$bin"
}
