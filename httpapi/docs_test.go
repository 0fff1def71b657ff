package httpapi

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// documentedErrors is a row of the error table of docs/api.md.
type documentedErrors struct {
	status string
	routes []string // "METHOD /path", sorted
}

// readErrorTable reads the table under "## Errors" in docs/api.md: code,
// status, the routes (listed as `METHOD /path`, or "every route", or
// "every route except" a list) and when.
func readErrorTable(t *testing.T, allRoutes []string) map[string]documentedErrors {
	t.Helper()
	text, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(text), "\n## Errors\n")
	if !ok {
		t.Fatal(`docs/api.md has no section "## Errors"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	route := regexp.MustCompile("`((?:GET|POST|PUT|PATCH|DELETE) /[^`]*)`")
	table := map[string]documentedErrors{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 6 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		code := strings.Trim(strings.TrimSpace(cells[1]), "`")
		routesCell := strings.TrimSpace(cells[3])
		var listed []string
		for _, m := range route.FindAllStringSubmatch(routesCell, -1) {
			listed = append(listed, m[1])
		}
		routes := listed
		if strings.HasPrefix(routesCell, "every route") {
			routes = slices.DeleteFunc(slices.Clone(allRoutes), func(r string) bool { return slices.Contains(listed, r) })
			if len(listed) > 0 && !strings.HasPrefix(routesCell, "every route except") {
				t.Errorf("docs/api.md, %s: %q lists routes after \"every route\" without \"except\"", code, routesCell)
			}
		}
		sort.Strings(routes)
		if _, dup := table[code]; dup {
			t.Errorf("docs/api.md lists %s twice", code)
		}
		table[code] = documentedErrors{status: strings.TrimSpace(cells[2]), routes: routes}
	}
	return table
}

// TestAPIGuideErrorTable checks the error table of docs/api.md against
// httpapi/openapi.json: the same codes, each with its status and exactly
// the routes whose documented answers carry it.
func TestAPIGuideErrorTable(t *testing.T) {
	doc := loadOpenAPI(t)
	var allRoutes []string
	want := map[string][]string{}
	for _, code := range doc.Components.Schemas["ErrorBody"].Value.Properties["error"].Value.Properties["code"].Value.Enum {
		want[fmt.Sprint(code)] = nil
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			route := method + " " + path
			allRoutes = append(allRoutes, route)
			for _, ref := range op.Responses.Map() {
				for _, code := range errorCodes(t, ref.Value) {
					if !slices.Contains(want[code], route) {
						want[code] = append(want[code], route)
					}
				}
			}
		}
	}
	table := readErrorTable(t, allRoutes)
	for code, routes := range want {
		sort.Strings(routes)
		row, ok := table[code]
		if !ok {
			t.Errorf("docs/api.md's error table lacks %s, which openapi.json lists on %v", code, routes)
			continue
		}
		if status := strconv.Itoa(statusOf[code]); row.status != status {
			t.Errorf("docs/api.md gives %s status %s, the server answers %s", code, row.status, status)
		}
		for _, r := range routes {
			if !slices.Contains(row.routes, r) {
				t.Errorf("docs/api.md does not list %s on %s, where openapi.json documents it", code, r)
			}
		}
		for _, r := range row.routes {
			if !slices.Contains(routes, r) {
				t.Errorf("docs/api.md lists %s on %s, where openapi.json does not document it", code, r)
			}
		}
	}
	for code := range table {
		if _, ok := want[code]; !ok {
			t.Errorf("docs/api.md lists %s, which is no error code of openapi.json", code)
		}
	}
	if len(table) < 15 {
		t.Errorf("docs/api.md's error table has %d codes", len(table))
	}
}
