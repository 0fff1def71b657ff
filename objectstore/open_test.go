package objectstore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, url string
		ok        bool
	}{
		{"directory", "file://" + dir, true},
		{"directory with prefix", "file://" + dir + "?prefix=published/", true},
		{"s3-compatible", "s3://bucket?prefix=companydocs/&endpoint=http://127.0.0.1:9&region=eu-central-1&use_path_style=true", true},
		{"missing directory", "file://" + filepath.Join(dir, "missing"), false},
		{"unknown parameter", "file://" + dir + "?colour=red", false},
		{"other scheme", "gs://bucket", false},
		{"no scheme", dir, false},
		{"credentials", "s3://AKIAEXAMPLE:s3cr3t@bucket?region=eu-central-1", false},
		{"credentials, other scheme", "ftp://user:s3cr3t@host/dir", false},
		{"not a URL", "s3://bucket\x7f:s3cr3t", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(context.Background(), c.url)
			if c.ok {
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			t.Log(err)
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Fatalf("the error repeats the secret: %v", err)
			}
		})
	}
}

// FuzzCheckPath: a path checkPath accepts names a file strictly inside the
// directory of the generation.
func FuzzCheckPath(f *testing.F) {
	for _, p := range []string{"meta.json", "bleve/store/00000001.zap", "../x", "a/../b", ".", "/abs", `a\b`, "a//b", "", "..."} {
		f.Add(p)
	}
	const dir = "/data/gen-1"
	f.Fuzz(func(t *testing.T, p string) {
		if checkPath(p) != nil {
			return
		}
		joined := filepath.Join(dir, filepath.FromSlash(p))
		if !strings.HasPrefix(joined, dir+string(filepath.Separator)) {
			t.Fatalf("checkPath accepts %q, which is %s", p, joined)
		}
		if objectKey("gen-1", p) != "gen-1/"+filepath.ToSlash(joined[len(dir)+1:]) {
			t.Fatalf("checkPath accepts %q, whose key is not its path", p)
		}
	})
}
