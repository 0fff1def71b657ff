#!/usr/bin/env bash
# Checks the Debian package (make test-deb, which make test runs):
#   scripts/deb-check.sh [DEB]
# Without DEB it builds one from a fresh go build of ./cmd/companydocs
# (without PGO: the packages are those the tests compiled, so only the
# link is new; make deb packages make build's PGO binary the same way).
#
#  1. lintian: no error and no warning (deploy/debian/lintian-overrides
#     gives the reason for each tag it hides; the spelling check of the
#     binary, information only, is left out); lintian is installed with
#     apt-get when missing, as scripts/postgres.sh installs PostgreSQL.
#  2. The files, their modes and the conffile are where the unit and the
#     docs say; the maintainer scripts parse; every variable the settings
#     file names is one the binary reads (serve -h) or the docs describe.
#  3. systemd-analyze verify passes on the unit inside the extracted tree
#     (--root: ExecStart must name the packaged binary) and prints nothing;
#     it is first shown a broken copy, which it must report.
#  4. As root, in a mount namespace of its own, on an overlay of / that
#     vanishes with it (the machine is not changed): dpkg -i installs the
#     package (its user, the owners and modes postinst sets), then the
#     service starts as its unit starts it: its ExecStart line as is, as
#     its User=, in its WorkingDirectory, with its UMask, LimitNOFILE, no
#     new privileges and the settings of the installed env file (one line
#     added: COMPANYDOCS_ADDR=127.0.0.1:0, so as not to take a port another
#     server holds), every file system read-only but the data directory,
#     /tmp and /var/tmp, /home and /root empty (ProtectSystem=strict,
#     ReadWritePaths, PrivateTmp, ProtectHome; probed first). It must
#     answer /readyz 200 on 127.0.0.1, then exit 0 on SIGTERM within the
#     unit's TimeoutStopSec. Its data directory is empty, so it first
#     ingests the embedded sample, as after a fresh install. Then the
#     package is installed again (an upgrade: the edited conffile and the
#     data stay), removed (the data and the settings stay) and purged (both
#     go). Not as root, the packaged binary starts from the extracted tree
#     as the caller, without the rest; under CI=true that fails instead.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
started=$SECONDS
step() { printf 'deb-check: %s (%d s)\n' "$*" $((SECONDS - started)) >&2; }
fail() {
	printf 'deb-check: FAIL: %s\n' "$*" >&2
	exit 1
}

# unit_value NAME: the last NAME= of the unit file $unit.
unit_value() { sed -n "s/^$1=//p" "$unit" | tail -n 1; }

# service_environment ENVFILE HOME USER: sets environment to what systemd
# gives the service: its defaults and the user's, then the file's lines.
service_environment() {
	environment=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
		"HOME=$2" "USER=$3" "LOGNAME=$3" SHELL=/usr/sbin/nologin)
	local line name value
	while IFS= read -r line || [[ -n $line ]]; do
		[[ $line =~ ^[[:space:]]*([#\;].*)?$ ]] && continue
		[[ $line =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] || fail "companydocs.env: a line systemd would not read: $line"
		name=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
		[[ $value =~ ^\"(.*)\"$ || $value =~ ^\'(.*)\'$ ]] && value=${BASH_REMATCH[1]}
		environment+=("$name=$value")
	done <"$1"
}

# serve_until_ready_then_stop CMD...: starts CMD (a command, or a function
# that replaces the shell by one), which must end by exec'ing the server; waits for /readyz 200, checks the process, sends
# SIGTERM and checks that it exits 0 within the unit's TimeoutStopSec.
serve_until_ready_then_stop() {
	local stop_timeout nofile url code server stopped rc=0
	stop_timeout=$(unit_value TimeoutStopSec)
	stop_timeout=${stop_timeout%s}
	nofile=$(unit_value LimitNOFILE)
	if ! (ulimit -n "$nofile") 2>/dev/null; then
		echo "deb-check: the descriptor limit cannot be raised to LimitNOFILE=$nofile here: $(ulimit -Hn)" >&2
		nofile=$(ulimit -Hn)
	fi
	# the files exist before the server's shell opens them: the loop below
	# may read before it does
	: >"$work/stdout"
	: >"$work/stderr"
	(
		ulimit -n "$nofile"
		umask "$(unit_value UMask)"
		if declare -F "$1" >/dev/null; then "$@"; else exec "$@"; fi
	) >"$work/stdout" 2>"$work/stderr" &
	server=$!
	for ((i = 0; i < 6000; i++)); do
		url=$(sed -n 's|.* on \(http://127\.0\.0\.1:[0-9]*/\)$|\1|p' "$work/stdout")
		[[ -n $url ]] && break
		kill -0 "$server" 2>/dev/null || break
		sleep 0.1
	done
	[[ -n $url ]] || fail "the server did not listen within 600 s: $(tail -n 5 "$work/stderr")"
	code=$(curl -s -o "$work/readyz" -w '%{http_code}' "${url}readyz")
	[[ $code == 200 ]] || fail "/readyz answered $code: $(cat "$work/readyz")"
	[[ $(awk '/^Max open files/ {print $4}' "/proc/$server/limits") == "$nofile" ]] ||
		fail "the server's descriptor limit is not $nofile"
	if [[ $(id -u) == 0 ]]; then
		[[ $(awk '/^Uid:/ {print $2}' "/proc/$server/status") != 0 ]] || fail "the server runs as root"
		[[ $(awk '/^NoNewPrivs:/ {print $2}' "/proc/$server/status") == 1 ]] || fail "the server may gain privileges"
	fi
	step "ready: /readyz 200 at $url, as uid $(awk '/^Uid:/ {print $2}' "/proc/$server/status")"
	kill -TERM "$server"
	stopped=$SECONDS
	wait "$server" || rc=$?
	((SECONDS - stopped <= stop_timeout)) || fail "SIGTERM took $((SECONDS - stopped)) s, over TimeoutStopSec=${stop_timeout}s"
	((rc == 0)) || fail "the server exited $rc on SIGTERM: $(tail -n 5 "$work/stderr")"
	step "stopped by SIGTERM in $((SECONDS - stopped)) s, exit 0"
}

# install_and_serve DEB WORK: step 4 as root, run in a mount namespace of
# its own (deb-check.sh runs itself under unshare --mount).
install_and_serve() {
	local deb=$1 m=$work/overlay/root
	mount -t tmpfs tmpfs "$work/overlay"
	mkdir -p "$work/overlay/upper" "$work/overlay/work" "$m"
	mount -t overlay overlay -o "lowerdir=/,upperdir=$work/overlay/upper,workdir=$work/overlay/work" "$m"
	mount --bind /proc "$m/proc"
	mount --bind /dev "$m/dev"
	cp "$deb" "$m/tmp/companydocs.deb"
	in_root() { chroot "$m" "$@"; }
	in_root dpkg -i /tmp/companydocs.deb >"$work/dpkg.log" 2>&1 || fail "dpkg -i: $(cat "$work/dpkg.log")"
	unit=$m/lib/systemd/system/companydocs.service
	local user group home data
	user=$(unit_value User) group=$(unit_value Group) data=$(unit_value ReadWritePaths)
	home=$(in_root getent passwd "$user" | cut -d: -f6) || fail "postinst made no user $user"
	[[ $(in_root stat -c '%U:%G %a' "$data") == "$user:$group 750" ]] ||
		fail "$data is $(in_root stat -c '%U:%G %a' "$data"), want $user:$group 750"
	[[ $(in_root stat -c '%U:%G %a' /etc/companydocs/companydocs.env) == "root:$group 640" ]] ||
		fail "the env file is $(in_root stat -c '%U:%G %a' /etc/companydocs/companydocs.env), want root:$group 640"
	step "installed on an overlay of /: user $user, $data and the env file owned as they should be"

	# sandboxed AS CMD...: the sandbox of the unit. It replaces the calling
	# shell by CMD, chrooted in a mount namespace of its own where the
	# installed system is read-only but ReadWritePaths, /tmp and /var/tmp,
	# and /home and /root are empty; as user AS (root: as root).
	sandboxed() {
		local as=$1
		shift
		exec unshare --mount --propagation private -- sh -c '
			set -e
			m=$1 data=$2 as=$3 group=$4 dir=$5
			shift 5
			for p in "$data" /tmp /var/tmp; do mount --bind "$m$p" "$m$p"; done
			mount -o remount,bind,ro "$m"
			for p in /home /root; do [ -d "$m$p" ] && mount -t tmpfs -o ro,mode=0755 tmpfs "$m$p"; done
			[ "$as" = root ] && exec chroot "$m" env -C "$dir" "$@"
			exec chroot "$m" setpriv --reuid="$as" --regid="$group" --init-groups --no-new-privs env -C "$dir" "$@"
		' sh "$m" "$data" "$as" "$group" "$(unit_value WorkingDirectory)" "$@"
	}
	(sandboxed root touch /usr/deb-check-probe) 2>/dev/null && fail "the sandbox lets the service write /usr"
	(sandboxed root sh -c '! ls -A /root | grep -q .') || fail "the sandbox shows /root"
	(sandboxed "$user" sh -c 'touch "$1/probe" && rm "$1/probe"' sh "$data") ||
		fail "the sandbox keeps $user from $data"
	step "sandbox probed: /usr read-only, /root empty, $data writable by $user"

	local envfile
	envfile=$(unit_value EnvironmentFile)
	echo "COMPANYDOCS_ADDR=127.0.0.1:0" >>"$m$envfile"
	service_environment "$m$envfile" "$home" "$user"
	read -ra argv <<<"$(unit_value ExecStart)"
	serve_until_ready_then_stop sandboxed "$user" env -i "${environment[@]}" "${argv[@]}"
	[[ -f $m$data/index/CURRENT && -f $m$data/orders.db ]] || fail "$data lacks index/CURRENT or orders.db"

	in_root dpkg -i /tmp/companydocs.deb >"$work/dpkg.log" 2>&1 || fail "dpkg -i again: $(cat "$work/dpkg.log")"
	grep -qx "COMPANYDOCS_ADDR=127.0.0.1:0" "$m$envfile" || fail "an upgrade replaced the edited env file"
	[[ -f $m$data/orders.db ]] || fail "an upgrade lost $data"
	in_root dpkg -r companydocs >"$work/dpkg.log" 2>&1 || fail "dpkg -r: $(cat "$work/dpkg.log")"
	[[ ! -e $m/usr/bin/companydocs ]] || fail "dpkg -r left /usr/bin/companydocs"
	[[ -f $m$data/orders.db && -f $m$envfile ]] || fail "dpkg -r removed the data or the settings"
	in_root dpkg -P companydocs >"$work/dpkg.log" 2>&1 || fail "dpkg -P: $(cat "$work/dpkg.log")"
	[[ ! -e $m$data && ! -e $m/etc/companydocs ]] || fail "dpkg -P left $data or /etc/companydocs"
	step "installed again (the edited settings and the data kept), removed (both kept), purged (both gone)"
}

if [[ ${1:-} == --in-namespace ]]; then
	work=$3
	started=$((-$4)) # the seconds the caller had taken
	install_and_serve "$2"
	exit 0
fi

work=$(mktemp -d)
chmod 0755 "$work" # the service's user reaches the packaged binary
trap 'rm -rf "$work"' EXIT

if ! command -v lintian >/dev/null; then
	echo "lintian not found: installing it with apt-get" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends lintian >/dev/null
fi

if [[ $# -gt 0 ]]; then
	deb=$(realpath "$1")
else
	"$GO" build -o "$work/companydocs" ./cmd/companydocs
	step "built the binary"
	deb=$(GO="$GO" scripts/deb.sh "$work/companydocs" "$work" 2>/dev/null)
fi
step "packaged $(basename "$deb")"

# 1. lintian. binaries/spelling reads every string of the binary for
# misspellings (7 of its 15 s) and reports them only as information (in its
# dependencies' words).
rc=0
lintian --fail-on error,warning -X binaries/spelling "$deb" >"$work/lintian" 2>&1 || rc=$?
grep -v '^running with root privileges' "$work/lintian" >&2 || true
((rc == 0)) || fail "lintian reports an error or a warning (above)"
step "lintian: no error, no warning"

# 2. files, modes, conffiles, maintainer scripts, settings
root=$work/root
dpkg-deb -x "$deb" "$root"
dpkg-deb -e "$deb" "$work/DEBIAN"
unit=$root/lib/systemd/system/companydocs.service
envfile=$root/etc/companydocs/companydocs.env
bin=$root/usr/bin/companydocs
for want in "$bin 755" "$unit 644" "$envfile 640" "$root/usr/share/doc/companydocs/copyright 644" \
	"$root/usr/share/doc/companydocs/changelog.Debian.gz 644" "$root/usr/share/lintian/overrides/companydocs 644"; do
	set -- $want
	[[ -f $1 ]] || fail "the package has no ${1#"$root"}"
	[[ $(stat -c %a "$1") == "$2" ]] || fail "${1#"$root"} has mode $(stat -c %a "$1"), want $2"
done
grep -qx /etc/companydocs/companydocs.env "$work/DEBIAN/conffiles" || fail "the env file is no conffile"
for s in postinst prerm postrm; do
	sh -n "$work/DEBIAN/$s" || fail "$s does not parse"
done
[[ $(unit_value ExecStart) == "/usr/bin/companydocs serve --data-dir /var/lib/companydocs"* ]] ||
	fail "ExecStart is $(unit_value ExecStart)"
[[ $(unit_value ReadWritePaths) == /var/lib/companydocs ]] || fail "ReadWritePaths is not the data directory"
[[ $(unit_value EnvironmentFile) == /etc/companydocs/companydocs.env ]] || fail "EnvironmentFile is not the packaged one"
grace=$("$bin" serve -h 2>&1 | grep -A1 -- '-shutdown-grace ' | sed -n 's/.*(default \([0-9]*\)s)$/\1/p')
stop=$(unit_value TimeoutStopSec)
[[ -n $grace && $stop =~ ^[0-9]+s$ ]] && ((${stop%s} >= grace + 10)) ||
	fail "TimeoutStopSec=$stop leaves no room after --shutdown-grace (${grace}s) to close the index and the store"
known=$("$bin" serve -h 2>&1 | grep -o 'env COMPANYDOCS_[A-Z_]*' | sed 's/^env //')
for v in $(sed -n 's/^#\{0,1\}\([A-Z][A-Z0-9_]*\)=.*/\1/p' "$envfile"); do
	grep -qx "$v" <<<"$known" || grep -q "\b$v\b" docs/operations.md ||
		fail "companydocs.env names $v, which serve -h does not read and docs/operations.md does not describe"
done
step "files, modes, conffile, maintainer scripts and settings"

# 3. systemd-analyze verify, in the extracted tree beside the host's units
# (the targets the unit is wanted by and ordered after). It reports a bad
# value and goes on ("ignoring") with exit code 0: any output fails.
for f in /lib/systemd/system/*; do
	[[ -e $root/lib/systemd/system/${f##*/} ]] || cp -a "$f" "$root/lib/systemd/system/"
done
verify() { systemd-analyze verify --root="$root" companydocs.service 2>&1; }
cp "$unit" "$work/unit.good"
sed 's/^ProtectSystem=strict$/ProtectSystem=bogus/' "$work/unit.good" >"$unit"
[[ -n $(verify) ]] || fail "systemd-analyze verify says nothing on a unit with ProtectSystem=bogus: it checks nothing here"
cp "$work/unit.good" "$unit"
out=$(verify) || fail "systemd-analyze verify: $out"
[[ -z $out ]] || fail "systemd-analyze verify: $out"
step "systemd-analyze verify"

# 4. install, serve, upgrade, remove, purge
if [[ $(id -u) == 0 ]]; then
	mkdir "$work/overlay"
	unshare --mount --propagation private -- "$0" --in-namespace "$deb" "$work" $((SECONDS - started))
	exit 0
fi
[[ ${CI:-} != true ]] || fail "not root: the package cannot be installed, nor the service sandboxed (CI=true)"
echo "deb-check: not root: the packaged binary runs from the extracted tree as $(id -un); not installed, not sandboxed" >&2
cp "$envfile" "$work/companydocs.env"
echo "COMPANYDOCS_ADDR=127.0.0.1:0" >>"$work/companydocs.env"
service_environment "$work/companydocs.env" "$HOME" "$(id -un)"
mkdir "$work/data"
read -ra argv <<<"$(unit_value ExecStart)"
argv=("${argv[@]/#\/usr\/bin\/companydocs/$bin}")
argv=("${argv[@]/#\/var\/lib\/companydocs/$work/data}")
serve_until_ready_then_stop env -i -C "$work/data" "${environment[@]}" "${argv[@]}"
