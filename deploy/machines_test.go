package deploy_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"companydocs/internal/objectstoretest"
	"companydocs/internal/pgcluster"
)

// guideMachines are the machines of docs/deploy.md's table: the address
// the guide gives each and the ports it uses there. Each port becomes a
// free one on 127.0.0.1 (PostgreSQL's the test cluster's). On s3 each
// port p comes with p+10000, which weed takes for gRPC unless told
// otherwise (and weed shell expects): the free port standing in for it
// has its +10000 free too.
var guideMachines = []struct {
	name, addr string
	ports      []int
	grpc       bool
}{
	{"db", "10.0.1.20", []int{5432}, false},
	{"s3", "10.0.1.30", []int{9333, 8080, 8888, 8333}, true},
	{"node-a", "10.0.1.11", []int{8080}, false},
	{"node-b", "10.0.1.12", []int{8080}, false},
	{"lb", "10.0.1.10", nil, false},
}

// machine plays one machine of the guide: root stands for its /, src for
// the source checkout its commands run in (data/ and scripts/ of the
// repository, bin/ holding the binary the test built), ports map the
// guide's ports to local ones.
type machine struct {
	name, addr string
	root, src  string
	ports      map[int]int
	env        []string // beside the guide's exports: the superuser's PG* on db
}

// world is the guide's machines and what the guide has exported so far.
type world struct {
	ctx         context.Context
	dir         string // logs and the state between blocks
	bin         string // the companydocs the test built
	pgBin       string
	base        []string // the environment every command starts from
	machines    []*machine
	exports     map[string]string
	failed      chan *background // a background command that exited with an error
	backgrounds []*background
	started     int
}

// newWorld checks the tools, builds the binary, starts PostgreSQL and
// lays out the machines.
func newWorld(ctx context.Context, t *testing.T, repo string) *world {
	t.Helper()
	pgBin, err := pgcluster.BinDir()
	if err != nil {
		t.Fatal(err) // names scripts/postgres.sh
	}
	if _, err := objectstoretest.Binary(); err != nil {
		t.Fatal(err) // names scripts/objectstore.sh; the guide installs this weed
	}
	w := &world{ctx: ctx, dir: t.TempDir(), pgBin: pgBin, exports: map[string]string{}, failed: make(chan *background, 16)}
	w.base = baseEnv(w.dir)
	w.lookTools(t)
	w.bin = filepath.Join(w.dir, "bin")
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(w.bin, "companydocs"), "./cmd/companydocs")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/companydocs: %v\n%s", err, out)
	}
	cluster := startPostgres(ctx, t)
	for _, g := range guideMachines {
		m := w.layOut(t, repo, g.name, g.addr)
		for _, p := range g.ports {
			if g.grpc {
				m.ports[p] = freePortPair(t)
				m.ports[p+10000] = m.ports[p] + 10000
			} else {
				m.ports[p] = freePort(t)
			}
		}
		w.machines = append(w.machines, m)
	}
	db := w.machine(t, "db")
	db.ports[5432] = cluster.Port
	db.env = []string{"PGHOST=" + cluster.Dir, "PGPORT=" + strconv.Itoa(cluster.Port), "PGUSER=postgres"}
	t.Cleanup(func() { removeWeedSockets(w.machine(t, "s3")) })
	return w
}

// baseEnv is the test's environment without what would steer the
// guide's commands (a store, keys, a database), with temporary files in
// dir.
func baseEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		steer := strings.HasPrefix(k, "COMPANYDOCS_") && k != "COMPANYDOCS_CACHE" ||
			strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "PG") || k == "DATABASE_URL" || k == "TMPDIR"
		if !steer {
			env = append(env, kv)
		}
	}
	return append(env, "TMPDIR="+dir, "AWS_EC2_METADATA_DISABLED=true")
}

// lookTools fails the test on a tool the guide uses that is missing.
func (w *world) lookTools(t *testing.T) {
	t.Helper()
	path := w.pgBin + string(os.PathListSeparator) + os.Getenv("PATH")
	var missing []string
	for _, tool := range []string{"bash", "curl", "openssl", "flock", "install", "psql", "pg_dump", "pg_restore", "createdb", "dropdb"} {
		found := false
		for _, dir := range filepath.SplitList(path) {
			if fi, err := os.Stat(filepath.Join(dir, tool)); err == nil && !fi.IsDir() {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("docs/deploy.md uses %v, not found in %s (PostgreSQL's client tools: scripts/postgres.sh)", missing, path)
	}
}

// layOut makes a machine's directories: the few of a fresh Debian the
// guide writes into, and the checkout.
func (w *world) layOut(t *testing.T, repo, name, addr string) *machine {
	t.Helper()
	m := &machine{name: name, addr: addr, root: filepath.Join(w.dir, name, "root"), src: filepath.Join(w.dir, name, "src"), ports: map[int]int{}}
	for _, d := range []string{"etc", "usr/local/bin", "var/lib", "var/backups", m.src} {
		if !filepath.IsAbs(d) {
			d = filepath.Join(m.root, d)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"data": filepath.Join(repo, "data"), "scripts": filepath.Join(repo, "scripts"), "bin": w.bin} {
		if err := os.Symlink(target, filepath.Join(m.src, link)); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func (w *world) machine(t *testing.T, name string) *machine {
	t.Helper()
	for _, m := range w.machines {
		if m.name == name {
			return m
		}
	}
	t.Fatalf("docs/deploy.md names a machine %q its table does not have", name)
	return nil
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// freePortPair returns a free port p with p+10000 free too.
func freePortPair(t *testing.T) int {
	t.Helper()
	for range 100 {
		p := freePort(t)
		if p+10000 > 65535 {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+10000))
		if err == nil {
			ln.Close()
			return p
		}
	}
	t.Fatal("found no free port p with p+10000 free")
	return 0
}

// startPostgres starts a bare cluster: no role or database of the
// service; the guide makes them.
func startPostgres(ctx context.Context, t *testing.T) *pgcluster.Cluster {
	t.Helper()
	c, err := pgcluster.Start(ctx, pgcluster.TestSettings...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	requirePasswords(ctx, t, c)
	return c
}

// requirePasswords makes the cluster ask every TCP login for its
// password (SCRAM), as the guide's pg_hba.conf line does for the nodes;
// the superuser comes in over the socket without one, as postgres does on
// Debian. It waits until a login without a password is refused, so that
// the guide's password is really checked.
func requirePasswords(ctx context.Context, t *testing.T, c *pgcluster.Cluster) {
	t.Helper()
	conn, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var hba string
	if err := conn.QueryRow(ctx, "SHOW hba_file").Scan(&hba); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hba, []byte("local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		other, err := pgx.Connect(ctx, c.URL("postgres"))
		if err != nil {
			return
		}
		other.Close(ctx)
		if time.Now().After(deadline) {
			t.Fatal("PostgreSQL still lets a TCP login in without a password after pg_hba.conf asks for one")
		}
	}
}

// removeWeedSockets removes the sockets weed puts in /tmp whatever
// TMPDIR says, named by their ports.
func removeWeedSockets(s3 *machine) {
	for _, port := range s3.ports {
		matches, _ := filepath.Glob(fmt.Sprintf("/tmp/seaweedfs-*-%d.sock", port))
		for _, m := range matches {
			os.Remove(m)
		}
	}
}

var (
	// hostPortRE is an IPv4 address with a port.
	hostPortRE = regexp.MustCompile(`\b(\d+\.\d+\.\d+\.\d+):(\d+)\b`)
	// flagPortRE is a port given as a flag's value: -s3.port=8333.
	flagPortRE = regexp.MustCompile(`(-[a-z][a-z0-9.]*port[a-z.]*=)(\d+)\b`)
	// guideAddrRE is an address of the guide's network.
	guideAddrRE = regexp.MustCompile(`\b10\.0\.1\.\d+\b`)
	// pathRE is an absolute path of a machine the guide writes or reads.
	pathRE = regexp.MustCompile(`(^|[\s='"])(/(?:etc|usr/local|var/lib|var/backups)/)`)
)

// substitute maps a block's machines onto this one: ADDR:PORT of a guide
// machine, and 127.0.0.1:PORT or -flag=PORT of the machine the block runs
// on, become 127.0.0.1 and the port standing in for it; a bare guide
// address becomes 127.0.0.1; an absolute path under /etc, /usr/local,
// /var/lib or /var/backups moves under the machine's root. An address of
// the guide's network left over fails the test, so that nothing leaves
// 127.0.0.1.
func (w *world) substitute(t *testing.T, m *machine, text string) string {
	t.Helper()
	text = hostPortRE.ReplaceAllStringFunc(text, func(s string) string {
		parts := hostPortRE.FindStringSubmatch(s)
		port, _ := strconv.Atoi(parts[2])
		for _, x := range w.machines {
			if local, ok := x.ports[port]; ok && (x.addr == parts[1] || x == m && parts[1] == "127.0.0.1") {
				return fmt.Sprintf("127.0.0.1:%d", local)
			}
		}
		return s
	})
	text = flagPortRE.ReplaceAllStringFunc(text, func(s string) string {
		parts := flagPortRE.FindStringSubmatch(s)
		port, _ := strconv.Atoi(parts[2])
		if local, ok := m.ports[port]; ok {
			return parts[1] + strconv.Itoa(local)
		}
		return s
	})
	text = guideAddrRE.ReplaceAllStringFunc(text, func(s string) string {
		if slices.ContainsFunc(w.machines, func(x *machine) bool { return x.addr == s }) {
			return "127.0.0.1"
		}
		return s
	})
	if left := guideAddrRE.FindString(text); left != "" {
		t.Fatalf("docs/deploy.md names %s, no machine of its table: the test would send traffic off 127.0.0.1", left)
	}
	return pathRE.ReplaceAllString(text, "${1}"+m.root+"${2}")
}
