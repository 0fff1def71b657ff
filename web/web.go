package web

import (
	"embed"
	"io/fs"
	"mime"
	"path"
)

//go:embed static
var static embed.FS

// IndexFile is the name of the page document inside Files.
const IndexFile = "index.html"

// Files returns the page's static files (index.html, app.css, i18n.js
// with its language files under i18n/, and the modules under js/), rooted
// at the top of the static directory.
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		// fs.Sub fails only on an invalid path name; "static" is valid.
		panic(err)
	}
	return sub
}

// contentTypes names the media types of the embedded files, so that the
// answer does not depend on the host's MIME tables.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".json": "application/json",
	".png":  "image/png",
	".svg":  "image/svg+xml",
	".ico":  "image/x-icon",
}

// ContentType returns the media type of a file by its extension.
func ContentType(name string) string {
	ext := path.Ext(name)
	if t, ok := contentTypes[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}
