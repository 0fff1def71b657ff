package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strings"

	"companydocs"
	"companydocs/messages"
	"companydocs/web"

	"github.com/gofiber/fiber/v2"
)

// contentSecurityPolicy lets the page load only its own files and talk only
// to its own origin: no inline script or style, no frames, no foreign hosts.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// webFile is an embedded page file, read once at start.
type webFile struct {
	body        []byte
	contentType string
	etag        string
}

// routeWeb serves the web page at "/" and its files under "/static/".
func (s *Server) routeWeb() {
	files, err := loadWebFiles(web.Files())
	if err != nil {
		// The files are embedded at build time; failing here means a broken build.
		panic(fmt.Sprintf("load embedded web files: %v", err))
	}
	s.app.Get("/", func(c *fiber.Ctx) error { return serveWebFile(c, files[web.IndexFile]) })
	// The message catalog, which the page reads for every sentence the
	// service says too (see package messages).
	catalog := newWebFile(MessagesFile, messages.JSON())
	s.app.Get("/static/"+MessagesFile, func(c *fiber.Ctx) error { return serveWebFile(c, catalog) })
	s.app.Get("/static/*", func(c *fiber.Ctx) error {
		f, ok := files[c.Params("*")]
		if !ok || c.Params("*") == web.IndexFile {
			return companydocs.Refusal(companydocs.ENOTFOUND, "refusal.no_file", nil)
		}
		return serveWebFile(c, f)
	})
}

// loadWebFiles reads every embedded file into memory with its ETag.
func loadWebFiles(fsys fs.FS) (map[string]*webFile, error) {
	files := map[string]*webFile{}
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		files[path] = newWebFile(path, body)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if files[web.IndexFile] == nil {
		return nil, fmt.Errorf("%s is missing", web.IndexFile)
	}
	return files, nil
}

// MessagesFile is the name under /static/ of the message catalog:
// {"en": {key: sentence}, "de": {...}}.
const MessagesFile = "messages.json"

// newWebFile keeps a file's body with its media type and ETag.
func newWebFile(name string, body []byte) *webFile {
	sum := sha256.Sum256(body)
	return &webFile{body: body, contentType: web.ContentType(name), etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

// serveWebFile answers with the file, the security headers and an ETag;
// browsers revalidate every time (no-cache), so a new binary's page is
// picked up at once while unchanged files cost only a 304.
func serveWebFile(c *fiber.Ctx, f *webFile) error {
	setSecurityHeaders(c)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderETag, f.etag)
	if etagMatches(c.Get(fiber.HeaderIfNoneMatch), f.etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, f.contentType)
	return c.Send(f.body)
}

func etagMatches(header, etag string) bool {
	for _, candidate := range strings.Split(header, ",") {
		if c := strings.TrimSpace(candidate); c == etag || c == "*" {
			return true
		}
	}
	return false
}

func setSecurityHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderContentSecurityPolicy, contentSecurityPolicy)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
}
