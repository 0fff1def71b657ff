package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"companydocs/internal/bench"
	"companydocs/internal/pgcluster"
)

// Publish and follow: the two newest generations of a data directory are
// published to a file:// object store (a directory on the same disk) with
// a throw-away PostgreSQL metastore; nodes start on empty data
// directories and follow. Each run has its own database, object store
// directory and nodes:
//
//  1. publish the older generation (timed);
//  2. node 1 on an empty data directory: start to /readyz 200, and the
//     stages its log times (download, install, open, ids ranked);
//  3. cp -r of the same generation directory on the same disk (the
//     disk's own copy speed);
//  4. node 2 on an empty data directory, as node 1;
//  5. publish the newer generation (timed), then poll both nodes'
//     /metrics until each serves it.
//
// Before 2, 3 and 4 the page cache is dropped (sync; echo 3 >
// /proc/sys/vm/drop_caches) when permitted; otherwise the result says the
// caches were warm.

// followRun is one run.
type followRun struct {
	Load     string        `json:"load_avg"`
	Publish  processTiming `json:"publish"`
	Bytes    int64         `json:"bytes"`
	Files    int           `json:"files"`
	Node1    nodeStart     `json:"node1"`
	Copy     time.Duration `json:"cp"`
	Node2    nodeStart     `json:"node2"`
	Publish2 processTiming `json:"publish2"`
	Bytes2   int64         `json:"bytes2"`
	// Uploaded2 is what the second publish sent; Shared2 the bytes of its
	// files that name an object of the first.
	Uploaded2   int64         `json:"uploaded2"`
	Shared2     int64         `json:"shared2"`
	Rollout     []rollout     `json:"rollout"`
	AllServing  time.Duration `json:"all_serving"`  // from the second publish's end (live) to the last node serving it
	FromPublish time.Duration `json:"from_publish"` // from the second publish's start
	ColdCaches  bool          `json:"cold_caches"`
}

type processTiming struct {
	Wall time.Duration `json:"wall"`
	CPU  time.Duration `json:"cpu"`
}

// nodeStart is a node started on an empty data directory.
type nodeStart struct {
	Ready time.Duration `json:"ready"` // process start to /readyz 200
	// From the node's log: process start to "downloading a published
	// generation"; that to "published generation installed" (download,
	// checks and install: the line's duration); that to "serving"; the
	// duration of "index generation's ids ranked".
	BeforeDownload time.Duration `json:"before_download"`
	Download       time.Duration `json:"download_install"`
	Open           time.Duration `json:"open"`
	Ranked         time.Duration `json:"ids_ranked"`
	MBps           float64       `json:"mb_per_s"` // generation bytes / Download
	PeakRSS        int64         `json:"peak_rss_bytes"`
}

// rollout is one node taking the second publication.
type rollout struct {
	Node string `json:"node"`
	// From the publish's end to the node's "downloading" line (the follow
	// interval's wait), that line's installed duration, and to serving it
	// (its /metrics names it).
	Wait     time.Duration `json:"wait"`
	Download time.Duration `json:"download_install"`
	Serving  time.Duration `json:"serving"`
	// LocalBytes are the bytes of the generation the node took from the
	// one it served instead of downloading them.
	LocalBytes int64 `json:"local_bytes"`
}

type followResult struct {
	Machine    machine     `json:"machine"`
	Generation string      `json:"generation"`
	Second     string      `json:"second_generation"`
	Interval   string      `json:"follow_interval"`
	Runs       []followRun `json:"runs"`
	Command    string      `json:"command"`
}

func runFollow(ctx context.Context, args []string) error {
	fs := newFlags("follow")
	bin := fs.String("bin", "bin/companydocs", "companydocs binary")
	dataDir := fs.String("data-dir", "", "data directory with two generations at least: the older of the two newest is published first, then the one CURRENT names")
	work := fs.String("work", "", "directory for the object store, the nodes' data directories and the copy, on the same disk (default DATA-DIR-follow; emptied)")
	runs := fs.Int("runs", 3, "runs (medians are reported)")
	interval := fs.Duration("follow-interval", 10*time.Second, "the nodes' --follow-interval")
	limit := fs.Duration("limit", 10*time.Minute, "longest wait for a node or a rollout")
	logs := fs.String("logs", "", "directory the nodes' logs are kept in, as RUN-NODE.log (default the parent of -work)")
	jsonOut := fs.String("json", "", "write the result as JSON here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dataDir == "" {
		return errors.New("need -data-dir")
	}
	first, second, err := twoGenerations(*dataDir)
	if err != nil {
		return err
	}
	if *work == "" {
		*work = strings.TrimSuffix(*dataDir, "/") + "-follow"
	}
	if *work, err = filepath.Abs(*work); err != nil {
		return err
	}
	pg, err := pgcluster.Start(ctx, bench.OrderPGSettings...)
	if err != nil {
		return err
	}
	defer pg.Close()
	if *logs == "" {
		*logs = filepath.Dir(*work)
	}
	f := &follow{bin: *bin, dataDir: *dataDir, work: *work, logs: *logs, interval: *interval, limit: *limit}
	res := followResult{Machine: describeMachine(), Generation: first, Second: second, Interval: interval.String(), Command: "bench follow " + strings.Join(args, " ")}
	printMachine(res.Machine)
	for r := range *runs {
		url, err := pg.CreateDatabase(ctx)
		if err != nil {
			return err
		}
		run, err := f.run(ctx, url, first, second, r+1)
		if err != nil {
			return fmt.Errorf("run %d: %w", r+1, err)
		}
		res.Runs = append(res.Runs, run)
		fmt.Fprintf(os.Stderr, "run %d: publish %s, node 1 ready %s, node 2 ready %s, cp %s, all serving the second %s after it went live\n",
			r+1, run.Publish.Wall.Round(time.Millisecond), run.Node1.Ready.Round(time.Millisecond), run.Node2.Ready.Round(time.Millisecond),
			run.Copy.Round(time.Millisecond), run.AllServing.Round(time.Millisecond))
	}
	os.RemoveAll(*work)
	printFollow(res)
	return writeJSON(*jsonOut, res)
}

// twoGenerations returns the older of the two newest generations and the
// one CURRENT names.
func twoGenerations(dataDir string) (string, string, error) {
	cur, err := os.ReadFile(filepath.Join(dataDir, "index", "CURRENT"))
	if err != nil {
		return "", "", fmt.Errorf("no generation in %s: %w", dataDir, err)
	}
	current := strings.TrimSpace(string(cur))
	entries, err := os.ReadDir(filepath.Join(dataDir, "index"))
	if err != nil {
		return "", "", err
	}
	var older []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "gen-") && e.Name() < current {
			older = append(older, e.Name())
		}
	}
	if len(older) == 0 {
		return "", "", fmt.Errorf("%s holds one generation (%s): ingest again for a second", dataDir, current)
	}
	sort.Strings(older)
	return older[len(older)-1], current, nil
}

type follow struct {
	bin, dataDir, work, logs string
	interval, limit          time.Duration
}

func (f *follow) run(ctx context.Context, storeURL, first, second string, n int) (followRun, error) {
	var run followRun
	os.RemoveAll(f.work)
	objects := filepath.Join(f.work, "objects")
	if err := os.MkdirAll(objects, 0o755); err != nil {
		return run, err
	}
	source := "file://" + objects
	run.Load = describeMachine().LoadAvg
	var err error
	var out string
	if run.Publish, out, err = f.publish(storeURL, source, first); err != nil {
		return run, err
	}
	if run.Bytes, run.Files, err = publishedBytes(out); err != nil {
		return run, err
	}
	nodes, err := f.startNodes(ctx, &run, storeURL, source, first)
	defer func() {
		for _, nd := range nodes {
			nd.stop()
		}
	}()
	if err != nil {
		return run, err
	}
	if err := f.rollOut(ctx, &run, nodes, storeURL, source, second); err != nil {
		return run, err
	}
	if out, err := exec.Command(f.bin, "nodes", "--store", storeURL).CombinedOutput(); err == nil {
		fmt.Fprintf(os.Stderr, "run %d, companydocs nodes:\n%s", n, out)
	}
	for _, nd := range nodes {
		if err := nd.keepLog(filepath.Join(f.logs, fmt.Sprintf("%s-run%d-%s.log", filepath.Base(f.work), n, nd.name))); err != nil {
			return run, err
		}
	}
	return run, nil
}

// startNodes starts two new nodes, one after the other on cold caches,
// and times each one's way to serving the first generation; between them
// it times a plain copy of that generation for comparison.
func (f *follow) startNodes(ctx context.Context, run *followRun, storeURL, source, first string) ([]*followNode, error) {
	var nodes []*followNode
	for i := 1; i <= 2; i++ {
		run.ColdCaches = dropCaches()
		nd, err := f.startNode(ctx, storeURL, source, fmt.Sprintf("node%d", i))
		if err != nil {
			return nodes, err
		}
		nodes = append(nodes, nd)
		ns, err := nd.startTimes(run.Bytes)
		if err != nil {
			return nodes, err
		}
		if i == 2 {
			run.Node2 = ns
			break
		}
		run.Node1 = ns
		run.ColdCaches = dropCaches() && run.ColdCaches
		if run.Copy, err = copyTime(filepath.Join(f.dataDir, "index", first), filepath.Join(f.work, "cp")); err != nil {
			return nodes, err
		}
	}
	return nodes, nil
}

// rollOut publishes the second generation and times each node's way to
// serving it.
func (f *follow) rollOut(ctx context.Context, run *followRun, nodes []*followNode, storeURL, source, second string) error {
	began := time.Now()
	var out string
	var err error
	if run.Publish2, out, err = f.publish(storeURL, source, second); err != nil {
		return err
	}
	live := time.Now()
	if run.Bytes2, _, err = publishedBytes(out); err != nil {
		return err
	}
	run.Uploaded2, run.Shared2 = uploadedBytes(out)
	// Every node is polled at once: each one's time is when it was first
	// seen serving the generation.
	type served struct {
		at  time.Time
		err error
	}
	seen := make([]chan served, len(nodes))
	for i, nd := range nodes {
		seen[i] = make(chan served, 1)
		go func() {
			at, err := nd.waitServing(ctx, second, f.limit)
			seen[i] <- served{at, err}
		}()
	}
	for i, nd := range nodes {
		s := <-seen[i]
		if s.err != nil {
			return s.err
		}
		ro := nd.rollout(second, live, s.at)
		run.Rollout = append(run.Rollout, ro)
		run.AllServing = max(run.AllServing, ro.Serving)
		run.FromPublish = max(run.FromPublish, s.at.Sub(began))
	}
	return nil
}

// rollout reads from the node's log how long it waited before it began
// downloading the generation published at live and how long the download
// took; it served the generation at.
func (nd *followNode) rollout(generation string, live, at time.Time) rollout {
	ro := rollout{Node: nd.name, Serving: at.Sub(live)}
	if l, ok := nd.logLine("downloading a published generation", generation); ok {
		ro.Wait, ro.LocalBytes = l.Time.Sub(live), l.LocalBytes
	}
	if l, ok := nd.logLine("published generation installed", generation); ok {
		ro.Download = l.duration()
	}
	return ro
}

// publish runs companydocs publish of one generation and returns its
// output.
func (f *follow) publish(storeURL, source, generation string) (processTiming, string, error) {
	cmd := exec.Command(f.bin, "publish", "--data-dir", f.dataDir, "--index-source", source, "--store", storeURL, "--generation", generation)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	p, err := bench.RunProcess(cmd)
	if err != nil {
		return processTiming{}, "", fmt.Errorf("%w: %s", err, out.String())
	}
	return processTiming{Wall: p.Wall, CPU: p.CPU}, out.String(), nil
}

// publishedBytes reads "published NAME: P profiles, F files, B bytes".
func publishedBytes(out string) (int64, int, error) {
	for _, l := range strings.Split(out, "\n") {
		var name string
		var profiles, files int
		var b int64
		if _, err := fmt.Sscanf(l, "published %s %d profiles, %d files, %d bytes", &name, &profiles, &files, &b); err == nil {
			return b, files, nil
		}
	}
	return 0, 0, fmt.Errorf("publish printed no size: %q", out)
}

// uploadedBytes reads what follows the size on publish's line: "(U
// uploaded, S shared with earlier generations)"; zeros when it is not
// there (a binary from before sharing).
func uploadedBytes(out string) (uploaded, shared int64) {
	for _, l := range strings.Split(out, "\n") {
		if _, rest, ok := strings.Cut(l, " bytes ("); ok && strings.HasPrefix(l, "published ") {
			fmt.Sscanf(rest, "%d uploaded, %d shared", &uploaded, &shared)
		}
	}
	return uploaded, shared
}

// dropCaches writes back and drops the page cache; false when not
// permitted (the caches stay warm).
func dropCaches() bool {
	if err := exec.Command("sync").Run(); err != nil {
		return false
	}
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0) == nil
}

// copyTime times cp -r of src to dst (and a sync, as the node's
// download syncs every file), then removes dst.
func copyTime(src, dst string) (time.Duration, error) {
	start := time.Now()
	if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("cp -r: %v: %s", err, out)
	}
	if err := exec.Command("sync").Run(); err != nil {
		return 0, err
	}
	d := time.Since(start)
	return d, os.RemoveAll(dst)
}

// followNode is a serve process following the object store.
type followNode struct {
	name, url, logPath string
	started            time.Time
	ready              time.Time
	cmd                *exec.Cmd
	done               chan error
}

func (f *follow) startNode(ctx context.Context, storeURL, source, name string) (*followNode, error) {
	port, err := bench.FreePort()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(f.work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	nd := &followNode{name: name, url: "http://" + addr, logPath: filepath.Join(f.work, name+".log"), done: make(chan error, 1)}
	logFile, err := os.Create(nd.logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	nd.cmd = exec.Command(f.bin, "serve", "--data-dir", dir, "--addr", addr, "--search-rate", "0", "--log-format", "json", "--log-level", "info",
		"--store", storeURL, "--index-source", source, "--node-name", name, "--follow-interval", f.interval.String())
	nd.cmd.Stdout, nd.cmd.Stderr = io.Discard, logFile
	nd.started = time.Now()
	if err := nd.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { nd.done <- nd.cmd.Wait() }()
	deadline := time.Now().Add(f.limit)
	client := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		select {
		case err := <-nd.done:
			nd.done <- err
			return nil, fmt.Errorf("%s exited before it was ready: %v; log %s", name, err, nd.logPath)
		case <-ctx.Done():
			nd.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		resp, err := client.Get(nd.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				nd.ready = time.Now()
				return nd, nil
			}
		}
	}
	nd.stop()
	return nil, fmt.Errorf("%s not ready in %s; log %s", name, f.limit, nd.logPath)
}

// logEntry is a line of the node's JSON log.
type logEntry struct {
	Time       time.Time `json:"time"`
	Msg        string    `json:"msg"`
	Generation string    `json:"generation"`
	DurationMS int64     `json:"duration_ms"`
	LocalBytes int64     `json:"local_bytes"`
}

func (l logEntry) duration() time.Duration { return time.Duration(l.DurationMS) * time.Millisecond }

func (nd *followNode) logLines() []logEntry {
	fh, err := os.Open(nd.logPath)
	if err != nil {
		return nil
	}
	defer fh.Close()
	var lines []logEntry
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l logEntry
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			lines = append(lines, l)
		}
	}
	return lines
}

// logLine is the first line with msg about generation ("" any).
func (nd *followNode) logLine(msg, generation string) (logEntry, bool) {
	for _, l := range nd.logLines() {
		if l.Msg == msg && (generation == "" || l.Generation == generation) {
			return l, true
		}
	}
	return logEntry{}, false
}

// startTimes reads the stages of the node's start from its log; the ids
// are ranked after it serves, so that line is waited for.
func (nd *followNode) startTimes(bytes int64) (nodeStart, error) {
	ns := nodeStart{Ready: nd.ready.Sub(nd.started)}
	dl, ok1 := nd.logLine("downloading a published generation", "")
	inst, ok2 := nd.logLine("published generation installed", "")
	srv, ok3 := nd.logLine("serving", "")
	if !ok1 || !ok2 || !ok3 {
		return ns, fmt.Errorf("%s: its log %s lacks the download, install or serving line", nd.name, nd.logPath)
	}
	ns.BeforeDownload = dl.Time.Sub(nd.started)
	ns.Download = inst.duration()
	ns.Open = srv.Time.Sub(inst.Time)
	if ns.Download > 0 {
		ns.MBps = float64(bytes) / 1e6 / ns.Download.Seconds()
	}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if l, ok := nd.logLine("index generation's ids ranked", ""); ok {
			ns.Ranked = l.duration()
			break
		}
	}
	if m, err := bench.ReadProcMemory(nd.cmd.Process.Pid); err == nil {
		ns.PeakRSS = m.Peak
	}
	return ns, nil
}

// waitServing polls /metrics until the node serves generation and
// returns when it first saw it.
func (nd *followNode) waitServing(ctx context.Context, generation string, limit time.Duration) (time.Time, error) {
	want := `companydocs_index_generation_info{generation="` + generation + `"} 1`
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		resp, err := client.Get(nd.url + "/metrics")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), want) {
				return time.Now(), nil
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case err := <-nd.done:
			nd.done <- err
			return time.Time{}, fmt.Errorf("%s exited: %v; log %s", nd.name, err, nd.logPath)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return time.Time{}, fmt.Errorf("%s did not serve %s within %s; log %s", nd.name, generation, limit, nd.logPath)
}

// keepLog copies the node's log next to the results.
func (nd *followNode) keepLog(dst string) error {
	b, err := os.ReadFile(nd.logPath)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

func (nd *followNode) stop() {
	if nd.cmd.ProcessState != nil {
		return
	}
	_ = nd.cmd.Process.Signal(os.Interrupt)
	select {
	case <-nd.done:
	case <-time.After(30 * time.Second):
		_ = nd.cmd.Process.Kill()
		<-nd.done
	}
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

func printFollow(res followResult) {
	fmt.Printf("Generations %s, then %s; nodes follow every %s; caches dropped before each node start and cp: %v\n\n",
		res.Generation, res.Second, res.Interval, len(res.Runs) > 0 && res.Runs[0].ColdCaches)
	fmt.Println("| run | load | publish s (CPU s) | bytes | node 1 ready s | before download s | download+install s | MB/s | open s | ids ranked s | node 1 peak RSS | cp -r s | cp MB/s | node 2 ready s | node 2 MB/s | second publish s | its bytes (uploaded, shared) | all serving it s (from live) | per node: wait / download+install / serving s |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	var pub, ready1, ready2, dl, mbps, cp, cpMBps, all, pub2 []float64
	for i, r := range res.Runs {
		cpRate := float64(r.Bytes) / 1e6 / r.Copy.Seconds()
		var per []string
		for _, ro := range r.Rollout {
			per = append(per, fmt.Sprintf("%s %s / %s / %s (%d bytes taken from the first)", ro.Node, secs(ro.Wait), secs(ro.Download), secs(ro.Serving), ro.LocalBytes))
		}
		fmt.Printf("| %d | %s | %s (%s) | %d | %s | %s | %s | %.0f | %s | %s | %s | %s | %.0f | %s | %.0f | %s | %d (%d, %d) | %s | %s |\n", i+1, r.Load,
			secs(r.Publish.Wall), secs(r.Publish.CPU), r.Bytes, secs(r.Node1.Ready), secs(r.Node1.BeforeDownload), secs(r.Node1.Download), r.Node1.MBps,
			secs(r.Node1.Open), secs(r.Node1.Ranked), bench.MiB(r.Node1.PeakRSS), secs(r.Copy), cpRate, secs(r.Node2.Ready), r.Node2.MBps, secs(r.Publish2.Wall),
			r.Bytes2, r.Uploaded2, r.Shared2, secs(r.AllServing), strings.Join(per, "; "))
		pub = append(pub, r.Publish.Wall.Seconds())
		pub2 = append(pub2, r.Publish2.Wall.Seconds())
		ready1 = append(ready1, r.Node1.Ready.Seconds())
		ready2 = append(ready2, r.Node2.Ready.Seconds())
		dl = append(dl, r.Node1.Download.Seconds())
		mbps = append(mbps, r.Node1.MBps)
		cp = append(cp, r.Copy.Seconds())
		cpMBps = append(cpMBps, cpRate)
		all = append(all, r.AllServing.Seconds())
	}
	fmt.Printf("\nMedians: publish %.1f s, second publish %.1f s; node 1 ready %.1f s (node 2 %.1f s); node 1 download+install %.1f s, %.0f MB/s; cp -r %.1f s, %.0f MB/s (download %.0f%% of cp's); all nodes serving the second publication %.1f s after it went live\n",
		median(pub), median(pub2), median(ready1), median(ready2), median(dl), median(mbps), median(cp), median(cpMBps), 100*median(mbps)/median(cpMBps), median(all))
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
