// Package objectstoretest runs a throw-away S3-compatible object store for
// tests: SeaweedFS (weed server with its S3 gateway) on 127.0.0.1 and free
// ports, its data in the test's temporary directory, one bucket created,
// credentials of its own. Stop or Crash, then Start, let a test take the
// store away and bring it back on the same ports and data; the store
// keeps what it acknowledged across that.
//
// It is not quick (2 cores): a first start takes about 11 s (the master
// holds back volume allocation, the filer's lock ring forms), Stop about
// 15 s, a Start after it about 17 s, 15 s of which the master refuses
// writes while it warms up (three heartbeat pulses of 5 s, fixed in
// SeaweedFS). A package with several tests shares one store (Run in
// TestMain) rather than starting one per test.
//
// The weed binary is built once by scripts/objectstore.sh into a cache
// outside the checkout (Binary says where). A missing binary fails the
// test, never skips it, and the failure says how to build it.
package objectstoretest

import (
	"bytes"
	"companydocs/internal/toolcache"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Region is the region the store is addressed with; SeaweedFS serves one.
const Region = "us-east-1"

// startTimeout bounds how long Start waits for the store to take a write.
const startTimeout = 2 * time.Minute

// probeBucket is where Start writes and deletes an object to know the
// store takes writes (the S3 gateway answers before the volume server
// has joined); Bucket holds only what its test writes.
const probeBucket = "readiness-probe"

// Server is a running (or stopped) SeaweedFS on loopback ports. Endpoint,
// Region, AccessKey, SecretKey and Bucket are what an S3 client needs;
// URL is the same as a gocloud.dev/blob URL.
type Server struct {
	Dir       string // data and logs
	Endpoint  string // http://127.0.0.1:port of the S3 gateway
	Region    string
	AccessKey string
	SecretKey string
	Bucket    string

	bin   string
	ports ports

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan error
}

// ports are the listening ports of weed server's four services.
type ports struct {
	master, masterGRPC, volume, volumeGRPC, filer, filerGRPC, s3, s3GRPC int
}

// Binary returns the path of the weed binary scripts/objectstore.sh
// builds, ${COMPANYDOCS_CACHE:-$HOME/.cache/companydocs}/bin/weed, or an
// error saying how to build it.
func Binary() (string, error) {
	bin, err := toolcache.Bin("weed")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("no object store server (SeaweedFS weed) at %s: run scripts/objectstore.sh, which builds it from the Go module proxy (about 12 minutes on 2 cores, once)", bin)
	}
	return bin, nil
}

// Start starts a store in a temporary directory of tb with a new bucket
// and kills it when tb ends. Failures, a missing binary among them, fail
// tb.
func Start(tb testing.TB) *Server {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	s, err := Run(ctx, tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Run starts a store with its data in dir (for a TestMain that shares one
// store among a package's tests) and returns once the bucket takes
// writes. Close it; dir is the caller's to remove.
func Run(ctx context.Context, dir string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Region: Region, AccessKey: "companydocs", SecretKey: randomHex(20), Bucket: "generations", bin: bin}
	if s.ports, err = freePorts(); err != nil {
		return nil, err
	}
	s.Endpoint = "http://127.0.0.1:" + strconv.Itoa(s.ports.s3)
	if err := s.Start(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// freePorts finds eight ports free on 127.0.0.1 at once, so that none is
// handed out twice.
func freePorts() (ports, error) {
	var p [8]int
	for i := range p {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return ports{}, fmt.Errorf("find a free port: %w", err)
		}
		defer ln.Close()
		p[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ports{p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]}, nil
}

// Prefix is the part of Bucket that URL names: an s3:// --index-source
// names the prefix that is the index's own.
const Prefix = "companydocs/"

// URL is the store's bucket under Prefix as a gocloud.dev/blob URL for
// s3blob. The credentials are not part of it: s3blob reads them from the
// environment (Env, Setenv).
func (s *Server) URL() string { return s.PrefixURL(Prefix) }

// PrefixURL is URL with another prefix; "" names the whole bucket (which
// companydocs refuses for an index).
func (s *Server) PrefixURL(prefix string) string {
	q := url.Values{}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	q.Set("endpoint", s.Endpoint)
	q.Set("region", s.Region)
	q.Set("use_path_style", "true")
	return "s3://" + s.Bucket + "?" + q.Encode()
}

// Env is the environment an AWS SDK (s3blob among them) takes the store's
// credentials from, for a child process.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_SESSION_TOKEN=",
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// Setenv sets Env in the test's own environment until tb ends (so the
// test cannot run in parallel with others, see testing.T.Setenv).
func (s *Server) Setenv(tb testing.TB) {
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		tb.Setenv(k, v)
	}
}

// Client is an S3 client of the store, signing with its credentials.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(s.Endpoint),
		Region:       s.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		UsePathStyle: true,
	})
}

// requestTimeout bounds each request of the helpers below.
const requestTimeout = 30 * time.Second

// Put writes data as the object key of Bucket (a key of the whole
// bucket, not under Prefix unless it says so).
func (s *Server) Put(tb testing.TB, key string, data []byte) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if _, err := s.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: &s.Bucket, Key: &key, Body: bytes.NewReader(data)}); err != nil {
		tb.Fatalf("write %s: %v", key, err)
	}
}

// Get reads the object key of Bucket.
func (s *Server) Get(tb testing.TB, key string) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	out, err := s.Client().GetObject(ctx, &s3.GetObjectInput{Bucket: &s.Bucket, Key: &key})
	if err != nil {
		tb.Fatalf("read %s: %v", key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		tb.Fatalf("read %s: %v", key, err)
	}
	return b
}

// Keys lists the key of every object in Bucket, sorted.
func (s *Server) Keys(tb testing.TB) []string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.Client(), &s3.ListObjectsV2Input{Bucket: &s.Bucket})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			tb.Fatalf("list %s: %v", s.Bucket, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	slices.Sort(keys)
	return keys
}

// BeginUpload starts a multipart upload of key in Bucket and uploads its
// first part, size bytes, and never completes it: what a publish killed
// in the middle of a large object leaves (S3 keeps and bills the part
// until the upload is aborted). It returns the upload's id.
func (s *Server) BeginUpload(tb testing.TB, key string, size int) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	c := s.Client()
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &s.Bucket, Key: &key})
	if err != nil {
		tb.Fatalf("begin an upload of %s: %v", key, err)
	}
	if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: &s.Bucket, Key: &key, UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader(make([]byte, size))}); err != nil {
		tb.Fatalf("upload a part of %s: %v", key, err)
	}
	return aws.ToString(up.UploadId)
}

// Uploads lists the keys of Bucket's incomplete multipart uploads,
// sorted.
func (s *Server) Uploads(tb testing.TB) []string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	var keys []string
	in := &s3.ListMultipartUploadsInput{Bucket: &s.Bucket}
	for {
		page, err := s.Client().ListMultipartUploads(ctx, in)
		if err != nil {
			tb.Fatalf("list the uploads of %s: %v", s.Bucket, err)
		}
		for _, u := range page.Uploads {
			keys = append(keys, aws.ToString(u.Key))
		}
		if !aws.ToBool(page.IsTruncated) {
			break
		}
		in.KeyMarker, in.UploadIdMarker = page.NextKeyMarker, page.NextUploadIdMarker
	}
	slices.Sort(keys)
	return keys
}

func (s *Server) args() []string {
	p, d := s.ports, s.Dir
	return []string{
		"-logdir=" + filepath.Join(d, "log"),
		"server",
		"-dir=" + filepath.Join(d, "data"),
		"-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.port=" + strconv.Itoa(p.master), "-master.port.grpc=" + strconv.Itoa(p.masterGRPC),
		// no usage reports; a restarted master leads after 1 s, not 10
		"-master.telemetry=false", "-master.electionTimeout=1s", "-master.volumeSizeLimitMB=64",
		"-volume.port=" + strconv.Itoa(p.volume), "-volume.port.grpc=" + strconv.Itoa(p.volumeGRPC),
		// two buckets of 7 volumes each; no 10 s wait before a stop
		"-volume.max=16", "-volume.preStopSeconds=0",
		"-filer", "-filer.port=" + strconv.Itoa(p.filer), "-filer.port.grpc=" + strconv.Itoa(p.filerGRPC),
		"-filer.localSocket=" + filepath.Join(d, "filer.sock"),
		"-s3", "-s3.port=" + strconv.Itoa(p.s3), "-s3.port.grpc=" + strconv.Itoa(p.s3GRPC),
		"-s3.port.iceberg=0", "-s3.port.lance=0",
		"-s3.localSocket=" + filepath.Join(d, "s3.sock"),
	}
}

// Start runs weed server and waits until the bucket takes a write,
// creating the bucket on the first start; after Stop it brings the same
// data back on the same ports.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("the object store is running already")
	}
	for _, sub := range []string{"data", "log"} {
		if err := os.MkdirAll(filepath.Join(s.Dir, sub), 0o755); err != nil {
			return fmt.Errorf("create object store directory: %w", err)
		}
	}
	logf, err := os.OpenFile(filepath.Join(s.Dir, "weed.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("create object store log: %w", err)
	}
	cmd := exec.Command(s.bin, s.args()...)
	cmd.Dir = s.Dir
	// weed takes an admin identity from these; TMPDIR keeps its temporary
	// files in Dir.
	cmd.Env = append(os.Environ(), append(s.Env(), "TMPDIR="+s.Dir)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// weed dies with the test binary, also when that is killed
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start weed server: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); logf.Close() }()
	if err := s.waitReady(ctx, done); err != nil {
		_ = cmd.Process.Kill()
		<-done
		return err
	}
	s.cmd, s.done = cmd, done
	return nil
}

// waitReady creates Bucket and probeBucket if they are missing and writes
// and deletes an object in probeBucket, retrying until both succeed, weed exits or ctx ends.
func (s *Server) waitReady(ctx context.Context, done chan error) error {
	client := s.Client()
	var last error
	for {
		if last = s.probe(ctx, client); last == nil {
			return nil
		}
		select {
		case err := <-done:
			done <- err
			log, _ := os.ReadFile(filepath.Join(s.Dir, "weed.log"))
			return fmt.Errorf("weed server exited: %v: %s", err, tail(log, 4096))
		case <-ctx.Done():
			return fmt.Errorf("the object store took no write: %w (last: %v)", ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *Server) probe(ctx context.Context, client *s3.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // a write waits out the master's warm-up
	defer cancel()
	for _, b := range []string{s.Bucket, probeBucket} {
		if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &b}); err != nil {
			_, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &b})
			var owned *types.BucketAlreadyOwnedByYou
			if err != nil && !errors.As(err, &owned) {
				return fmt.Errorf("create bucket %s: %w", b, err)
			}
		}
	}
	b, key := probeBucket, "probe"
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: &b, Key: &key, Body: strings.NewReader("ready")}); err != nil {
		return fmt.Errorf("write %s/%s: %w", b, key, err)
	}
	if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b, Key: &key}); err != nil {
		return fmt.Errorf("delete %s/%s: %w", b, key, err)
	}
	return nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// Stop shuts weed down (SIGTERM; SIGKILL after 30 s). The data stays for
// Start. It takes about 15 s: the filer waits that long to flush its
// metadata event log to the volume server, which has stopped before it,
// and then drops the log (the objects and their metadata stay).
func (s *Server) Stop() { s.signal(syscall.SIGTERM) }

// Crash kills weed (SIGKILL), the way a crash of the process would. What
// it acknowledged stays for Start: its writes are in the operating
// system's files.
func (s *Server) Crash() { s.signal(syscall.SIGKILL) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd, s.done = nil, nil
}

// Close kills weed (its data is thrown away with the test's directory)
// and removes the gRPC sockets it puts in /tmp whatever
// TMPDIR says (Dir is the test's to remove).
func (s *Server) Close() {
	s.Crash()
	p := s.ports
	for name, port := range map[string]int{"master": p.masterGRPC, "volume": p.volumeGRPC, "filer": p.filerGRPC, "s3": p.s3GRPC} {
		os.Remove(fmt.Sprintf("/tmp/seaweedfs-%s-grpc-%d.sock", name, port))
	}
}
