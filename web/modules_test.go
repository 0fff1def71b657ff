package web

import (
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// maxModuleLines is the size past which a module of the page is split,
// as a Go file is past about 600 lines.
const maxModuleLines = 500

// importSpecifier finds what a module loads: `import ... from "./x.js"`
// (over several lines too), `export ... from "./x.js"`, a bare
// `import "./x.js"` and a dynamic `import("./x.js")`.
var importSpecifier = regexp.MustCompile(`(?m)(?:^(?:import|export)\s[^;'"]*?\bfrom\s*|^import\s*|\bimport\(\s*)["']([^"']+)["']`)

// staticModules reads every JavaScript module of the page (i18n.js, its
// language files, js/*.js) by its name inside Files.
func staticModules(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := fs.WalkDir(Files(), ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(name, ".js") {
			out[name] = readFile(t, name)
		}
		return err
	})
	if err != nil || len(out) < 10 {
		t.Fatalf("page modules: %d read, %v", len(out), err)
	}
	return out
}

// moduleImports returns the embedded files a module imports. The page is
// served under /static/ with no build step, so every specifier is
// relative ("./x.js", "../x.js") or absolute under /static/.
func moduleImports(t *testing.T, name, js string, modules map[string]string) []string {
	t.Helper()
	var out []string
	for _, m := range importSpecifier.FindAllStringSubmatch(js, -1) {
		spec := m[1]
		var target string
		switch {
		case strings.HasPrefix(spec, "./"), strings.HasPrefix(spec, "../"):
			target = path.Join(path.Dir(name), spec)
		case strings.HasPrefix(spec, "/static/"):
			target = strings.TrimPrefix(spec, "/static/")
		default:
			t.Errorf("%s imports %q, which the browser cannot load without a build step", name, spec)
			continue
		}
		if _, ok := modules[target]; !ok {
			t.Errorf("%s imports %q, which is not a module of the page (%s)", name, spec, target)
			continue
		}
		out = append(out, target)
	}
	return out
}

// TestModuleGraph checks how the page's modules import each other: no
// module imports itself through others (a cycle makes a module run with
// its imports unset, and the parts no longer layer), every module is
// loaded by main.js, and none is over maxModuleLines lines.
func TestModuleGraph(t *testing.T) {
	modules := staticModules(t)
	graph := map[string][]string{}
	for name, js := range modules {
		graph[name] = moduleImports(t, name, js, modules)
		if n := strings.Count(js, "\n"); n > maxModuleLines {
			t.Errorf("%s has %d lines; split it (at most %d)", name, n, maxModuleLines)
		}
	}
	// A pattern that stops matching would make every check below pass.
	if n := len(graph["js/main.js"]); n < 8 {
		t.Fatalf("js/main.js: %d imports read; the import pattern no longer matches", n)
	}
	for _, cycle := range importCycles(graph) {
		t.Errorf("import cycle: %s", strings.Join(cycle, " → "))
	}
	reached := map[string]bool{}
	var visit func(string)
	visit = func(name string) {
		if !reached[name] {
			reached[name] = true
			for _, next := range graph[name] {
				visit(next)
			}
		}
	}
	visit("js/main.js")
	for name := range modules {
		if !reached[name] {
			t.Errorf("%s is not loaded by js/main.js through its imports", name)
		}
	}
}

// importCycles returns one cycle through each import that closes one,
// found by a depth-first walk in the order of the module names, each as
// the modules along it with the first repeated at the end.
func importCycles(graph map[string][]string) [][]string {
	const (
		unseen = iota
		onPath
		done
	)
	stateOf := map[string]int{}
	var stack []string
	var cycles [][]string
	var walk func(string)
	walk = func(name string) {
		stateOf[name] = onPath
		stack = append(stack, name)
		for _, next := range graph[name] {
			switch stateOf[next] {
			case onPath:
				start := len(stack) - 1
				for stack[start] != next {
					start--
				}
				cycle := append(append([]string{}, stack[start:]...), next)
				cycles = append(cycles, cycle)
			case unseen:
				walk(next)
			}
		}
		stack = stack[:len(stack)-1]
		stateOf[name] = done
	}
	names := make([]string, 0, len(graph))
	for name := range graph {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if stateOf[name] == unseen {
			walk(name)
		}
	}
	return cycles
}

// TestImportCyclesFound checks importCycles itself on a small graph with
// the former circle of the order modules, and on one without a circle.
func TestImportCyclesFound(t *testing.T) {
	circular := map[string][]string{
		"js/main.js":    {"js/order.js", "js/orders.js"},
		"js/order.js":   {"js/core.js", "js/orders.js", "js/payment.js"},
		"js/orders.js":  {"js/core.js", "js/order.js", "js/queue.js"},
		"js/payment.js": {"js/core.js", "js/order.js"},
		"js/queue.js":   {"js/orders.js"},
		"js/core.js":    nil,
	}
	got := map[string]bool{}
	for _, c := range importCycles(circular) {
		got[strings.Join(c, " → ")] = true
	}
	for _, want := range []string{
		"js/order.js → js/orders.js → js/order.js",
		"js/order.js → js/payment.js → js/order.js",
		"js/orders.js → js/queue.js → js/orders.js",
	} {
		if !got[want] {
			t.Errorf("importCycles missed %s; found %v", want, got)
		}
	}
	layered := map[string][]string{"js/main.js": {"js/order.js", "js/core.js"}, "js/order.js": {"js/core.js"}, "js/core.js": nil}
	if c := importCycles(layered); len(c) != 0 {
		t.Errorf("importCycles found %v in a graph without a cycle", c)
	}
}

// TestImportSpecifiers checks the import pattern on the forms a module
// may use.
func TestImportSpecifiers(t *testing.T) {
	modules := map[string]string{"js/a.js": "", "js/b.js": "", "js/c.js": "", "js/d.js": "", "js/e.js": "", "i18n.js": "", "i18n/en.js": ""}
	js := `import { a, b } from "./a.js";
import {
  x,
  y,
} from './b.js';
import "./c.js";
export { z } from "./d.js";
const later = () => import("./e.js");
import { texts } from "../i18n.js";
const m = import("/static/i18n/en.js");
// a word "import" in a comment is not an import, nor is t("import.from").
`
	got := moduleImports(t, "js/main.js", js, modules)
	want := []string{"js/a.js", "js/b.js", "js/c.js", "js/d.js", "js/e.js", "i18n.js", "i18n/en.js"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("imports = %v, want %v", got, want)
	}
}
