package services_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/dynastack/dynastack/constructs/service"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A name both sides of a service agree on is written once, in the
// service's contract (constructs/<service>/contract): the names of its
// item attributes and the fixed parts of its keys (service.Contract's
// Attributes and KeyParts), its path and query parameters (Route.Params,
// Route.Query), and its route paths, which clients build with Route.URL.
// TestNamesComeFromTheContract fails on such a name written again as a
// string literal in the module's non-test code (third_party aside).
//
// A service's own code (services/<service>/…) is checked against its own
// contract, since another service's names mean nothing there (rez_agent's
// "message" is a noun of its errors, not Stak's attribute); the rest of
// the module (the platform, the dev tools, the mains) against every
// contract. Route paths and key parts are distinctive and checked
// everywhere.
//
// Some literals equal a contract name and still mean something else; they
// are allowed where they stand, each for a reason:
//
//   - a log attribute key (an argument of a log/slog function, or of a
//     logger's Debug, Info, Warn, Error, their …Context forms, Log,
//     LogAttrs or With): the logs' vocabulary, not the items';
//   - a key of a map[string]any literal: a JSON document (a body a dev
//     tool sends, an event's detail, an audit entry's details), named by
//     the API's JSON fields, which the contract does not declare;
//   - the field a validation names (the first string argument of a call
//     on v, or of a call that passes v or &v: by the services' convention
//     v is the request's api.Validator; and the Field of a FieldError
//     literal): a request body's field as the documented 400 answers name
//     it;
//   - a literal allowedLiterals lists for its file, with the reason.
//
// A struct tag (`dynamodbav:"status"`) is not an expression and is not
// checked: Go takes tags from literals only.

// allowedLiterals are literals that equal a contract name and mean
// something else, by file (relative to lambdas/) and literal, with why.
// Keep it short: most such literals read better as the contract's
// constant.
var allowedLiterals = map[string]map[string]string{
	"services/rezagent/message.go":   {"stage": "the stage named stage, one of Stages"},
	"services/stak/http.go":          {"tenant": "ClaimTenant, the token's claim the path's tenant must equal"},
	"services/agenticpm/action.go":   {"executed": "an action's state in a conflict's message"},
	"services/agenticpm/artefact.go": {"content": "the request field a TooLargeError names"},
	"services/agenticpm/project.go":  {"config": "the request field a TooLargeError names"},
	"services/agenticpm/settings.go": {"integration": "the noun a NotFoundError names"},
	"devtools/cmd/local/tokens.go": {
		"tenant": "the token's tenant claim and its flag (stak.ClaimTenant)",
		"ttl":    "the flag of the token's lifetime",
	},
	"devtools/cmd/smoke/main.go":   {"stage": "the flag naming the deployed stage"},
	"devtools/cfntables/routes.go": {"integrations/": "CloudFormation's route target, integrations/<integration id>, not AgenticPM's route"},
	"ops/migrator/main.go":         {"stage": "the flag naming the stage migrated"},
	"devtools/smoke/services.go": {
		"status": jsonLabel, "created_by": jsonLabel, "schedule_name": jsonLabel, "end_cron": jsonLabel, "name": jsonLabel,
	},
	"devtools/load/load.go":         {"read": "an operation of the load mix"},
	"devtools/awsloop/awsloop.go":   {"message": "the JSON protocols' error field"},
	"devtools/awsloop/ecs.go":       {"arn": "a field of ECS's DescribeServices failures"},
	"devtools/ntfysink/ntfysink.go": {"message": "ntfy's event name"},
	"platform/api/strict.go":        {"body": "what a decoding error names when the body has no field to name"},
	"devtools/openapi/openapi.go": {
		"message":   "a JSON field of the error body's schema (api.Error)",
		"caller_id": "the field the error body's example names",
	},
	"services/agenticpm/openapi.go": {"date": "the JSON Schema format of ParamDate"},
	"services/nucleus/openapi.go":   {"external_id": "the answer's JSON field a replay leaves out (api.Secret)"},
	"platform/bodyschema/cost.go": {
		"description": "a JSON Schema keyword (an annotation, not a subschema)",
		"type":        "a JSON Schema keyword",
	},
}

// jsonLabel: the smoke test's want names the field of an answer it
// compares.
const jsonLabel = "the JSON field of an answer want compares"

// logCalls are the methods whose string arguments are log attribute keys
// (or the message).
var logCalls = []string{"Debug", "Info", "Warn", "Error", "DebugContext", "InfoContext", "WarnContext", "ErrorContext", "Log", "LogAttrs", "With"}

// contractNames are the names of the contracts: by service name, the
// names a service's code must not write (its attributes and parameters),
// each with what it is; under "", every service's. parts are the key
// parts, fragments the first segment of every route's path.
type contractNames struct {
	names     map[string]map[string]string
	parts     map[string]string
	fragments []string
}

func namesOfContracts(t *testing.T) contractNames {
	t.Helper()
	c := contractNames{names: map[string]map[string]string{"": {}}, parts: map[string]string{}}
	add := func(svc, name, what string) {
		assert.NotEmpty(t, name, "%s is empty", what)
		for _, s := range []string{svc, ""} {
			if c.names[s] == nil {
				c.names[s] = map[string]string{}
			}
			if _, dup := c.names[s][name]; !dup {
				c.names[s][name] = what
			}
		}
	}
	for _, s := range catalog.Services() {
		for _, p := range []service.QueryParam{service.Limit, service.Cursor} {
			add(s.Name, p.String(), "a query parameter of every listing (constructs/service)")
		}
		assert.NotEmpty(t, s.Attributes, "%s's contract lists no Attributes", s.Name)
		for _, a := range s.Attributes {
			add(s.Name, a, fmt.Sprintf("an attribute of %s's items", s.Name))
		}
		for _, k := range s.KeyParts {
			if _, dup := c.parts[k]; !dup {
				c.parts[k] = fmt.Sprintf("a key part of %s's items", s.Name)
			}
		}
		for _, f := range s.Functions {
			for _, r := range f.Routes {
				for _, p := range r.Params() {
					add(s.Name, p.String(), fmt.Sprintf("a path parameter of %s's %s", s.Name, r.Key()))
				}
				for _, q := range r.Query {
					add(s.Name, q.String(), fmt.Sprintf("a query parameter of %s's %s", s.Name, r.Key()))
				}
				seg, _, _ := strings.Cut(strings.TrimPrefix(r.Path, "/"), "/")
				if !slices.Contains(c.fragments, seg) {
					c.fragments = append(c.fragments, seg)
				}
			}
		}
	}
	return c
}

// check says what s is if it is a contract name for code of svc ("" for
// code outside the services), or "".
func (c contractNames) check(svc, s string) string {
	for _, f := range c.fragments {
		rest, abs := strings.CutPrefix(s, "/"+f)
		if abs && (rest == "" || rest[0] == '/' || rest[0] == '?') || strings.HasPrefix(s, f+"/") {
			return fmt.Sprintf("a route path (/%s…): build it with the contract's Route.URL", f)
		}
	}
	for p, what := range c.parts {
		if s == p || strings.HasSuffix(p, "#") && strings.HasPrefix(s, p) {
			return what + ": use the contract's constant or key function"
		}
	}
	if what, ok := c.names[svc][s]; ok {
		return what + ": use the contract's constant"
	}
	return ""
}

func TestNamesComeFromTheContract(t *testing.T) {
	c := namesOfContracts(t)
	root := ".." // lambdas/
	fset := token.NewFileSet()
	files, used := 0, map[string]bool{}
	var generated []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && (rel == "third_party" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		files++
		// The typed clients (lambdas/client/<service>) are generated
		// from docs/api, itself generated from the contract; their
		// staleness test keeps them equal to it. Only they are generated.
		if ast.IsGenerated(f) {
			generated = append(generated, rel)
			return nil
		}
		svc := ""
		if parts := strings.Split(rel, "/"); len(parts) > 2 && parts[0] == "services" && c.names[parts[1]] != nil {
			svc = parts[1]
		}
		for _, lit := range suspects(f) {
			s, _ := strconv.Unquote(lit.Value)
			what := c.check(svc, s)
			if what == "" {
				continue
			}
			if _, ok := allowedLiterals[rel][s]; ok {
				used[rel+" "+s] = true
				continue
			}
			assert.Failf(t, "a contract name written again", "%s: %s is %s", fset.Position(lit.Pos()), lit.Value, what)
		}
		return nil
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, files, 100, "files checked under lambdas/: is the walk rooted right?")
	for _, g := range generated {
		assert.Regexp(t, `^client/[a-z]+/client\.gen\.go$`, g, "only the typed clients are generated code the names check skips")
	}
	for file, lits := range allowedLiterals {
		for s := range lits {
			assert.True(t, used[file+" "+s], "allowedLiterals lists %q in %s, which has no such literal (or it is no contract name): drop it", s, file)
		}
	}
}

// TestNamesCheckFindsThem: the check finds each kind of name where it
// stands, and leaves alone the places the rules allow.
func TestNamesCheckFindsThem(t *testing.T) {
	c := namesOfContracts(t)
	for _, tt := range []struct {
		svc, src string
		want     []string // the literals found, in order
	}{
		{"itsm", `x := map[string]string{"#s": "status"}`, []string{`"status"`}},
		{"nucleus", `k := map[string]types.AttributeValue{"pk": v}`, []string{`"pk"`}},
		{"nucleus", `k := "ACCOUNT#" + id`, []string{`"ACCOUNT#"`}},
		{"nucleus", `k := "TYPE#ACCOUNT"`, []string{`"TYPE#ACCOUNT"`}},
		{"itsm", `id := r.PathValue("id")`, []string{`"id"`}},
		{"itsm", `c := q.Get("caller")`, []string{`"caller"`}},
		// The first segment makes a path a route's: "/comments" alone is none.
		{"", `p := "/tickets/" + id + "/comments"`, []string{`"/tickets/"`}},
		{"", `p := "/tickets?caller=x"`, []string{`"/tickets?caller=x"`}},
		{"itsm", `h.Set("Location", "tickets/"+id)`, []string{`"tickets/"`}},
		{"", `x := "ticket_id"`, []string{`"ticket_id"`}},
		// Another service's attribute in a service's code is no name of its own.
		{"rezagent", `x := "pk"`, nil},
		// Allowed where they stand.
		{"itsm", `log.InfoContext(ctx, "changed", "status", s)`, nil},
		{"itsm", `a := slog.String("status", s)`, nil},
		{"itsm", `b := map[string]any{"status": s}`, nil},
		{"itsm", `v.OneOf("status", s, all...)`, nil},
		{"agenticpm", `text(&v, "name", s, 10)`, nil},
		{"itsm", `e := api.FieldError{Field: "status", Message: "m"}`, nil},
		{"itsm", `x := "statuses"`, nil},
		{"", `p := "/ticketsx"`, nil},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\nfunc f() {\n"+tt.src+"\n}", 0)
		require.NoError(t, err)
		var got []string
		for _, lit := range suspects(f) {
			s, _ := strconv.Unquote(lit.Value)
			if c.check(tt.svc, s) != "" {
				got = append(got, lit.Value)
			}
		}
		assert.Equal(t, tt.want, got, "%s in %q: the literals found", tt.src, tt.svc)
	}
}

// suspects are the string literals of f outside the places where a
// literal equal to a contract name means something else (see above).
func suspects(f *ast.File) []*ast.BasicLit {
	skip := map[ast.Node]bool{}
	var out []*ast.BasicLit
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			return false
		case *ast.CallExpr:
			if isLogCall(n) {
				for _, a := range n.Args {
					skip[a] = true
				}
			} else if validates(n) {
				for _, a := range n.Args {
					if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						skip[a] = true
						break
					}
				}
			}
		case *ast.KeyValueExpr:
			if isIdent(n.Key, "Field") {
				skip[n.Value] = true
			}
		case *ast.CompositeLit:
			if m, ok := n.Type.(*ast.MapType); ok && isIdent(m.Key, "string") && isAny(m.Value) {
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						skip[kv.Key] = true
					}
				}
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING && !skip[n] {
				out = append(out, n)
			}
		}
		return true
	})
	return out
}

// validates: v.Method(…), or f(…, v, …), f(…, &v, …).
func validates(c *ast.CallExpr) bool {
	if sel, ok := c.Fun.(*ast.SelectorExpr); ok && isIdent(sel.X, "v") {
		return true
	}
	for _, a := range c.Args {
		if u, ok := a.(*ast.UnaryExpr); ok && u.Op == token.AND {
			a = u.X
		}
		if isIdent(a, "v") {
			return true
		}
	}
	return false
}

// isLogCall: slog.Anything(…), or a method named as a logger's.
func isLogCall(c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	return isIdent(sel.X, "slog") || slices.Contains(logCalls, sel.Sel.Name)
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func isAny(e ast.Expr) bool {
	if isIdent(e, "any") {
		return true
	}
	it, ok := e.(*ast.InterfaceType)
	return ok && len(it.Methods.List) == 0
}

// routePathRoots are the trees whose Go files build no route's path from
// a literal, relative to lambdas/services (this test's directory): their
// non-test code, and the tests of checkedTests.
var routePathRoots = []string{"..", "../../test", "../../infra", "../../app"}

// checkedTests are the folders and files (relative to the repository
// root) whose tests are checked too: the repository's clients, which
// call the generated client of lambdas/client/<service> (the smoke and
// load tools and the local runner in lambdas/devtools, the operator tools
// in lambdas/ops, the end-to-end tests in test/e2e); the services' own
// tests, which drive their handler through devtools/servicetest
// (s.MustRoute(t, 200, contract.GetTicket, "", &tk, id), or the route's
// Method and URL); and the tests that build requests by hand for a
// function's bootstrap or a policy: API Gateway events (test/artifact),
// the calls that reach KMS (test/kmscalls), the Stak host grant
// (test/host_grant_test.go). A request the generated client cannot send
// (a malformed or hostile one) builds its path with the contract's
// Route.URL too, with a deliberately bad value.
//
// What stays out, and why: the platform's unit tests (platform/api, ddb,
// fn: routes and cursors of their own, not a service's), the rest of
// test/ (ARN patterns in test/iameval, paths of workflow files and
// templates, not requests), constructs/ (the contracts themselves, and
// constructs/service's tests of the Route type with routes of their own).
var checkedTests = []string{
	"lambdas/devtools/", "lambdas/ops/", "test/e2e/",
	"lambdas/services/",
	"test/artifact/", "test/kmscalls/", "test/host_grant_test.go",
}

// allowedPaths are the route path literals the check lets stand, by file
// (relative to the repository root) and literal as written, each with
// the reason; the line beside each says it too.
var allowedPaths = map[string]map[string]string{
	"lambdas/services/stak/http_test.go": {
		`"/tenants/a*/settings"`: "the case is the raw * in a path segment, which Route.URL would send escaped (%2A)",
	},
	"lambdas/devtools/cfntables/routes.go": {
		`"integrations/"`: "not a request: API Gateway's route target prefix (integrations/<integration id>), which the template's routes are read by",
	},
	"lambdas/services/names_test.go": {
		`"integrations/"`: "not a request: the key of cfntables' target prefix in allowedLiterals",
	},
	"test/host_grant_test.go": {
		`"/tenants/{tenant}/"`: "not a request: the prefix of a host route's template, stated apart from constructs/stak's grant, which the test checks",
	},
}

// TestRoutePathsComeFromTheContract fails on a string literal starting
// like a route's path (a route's first segment, "/tickets…" or
// "tickets/…") in any Go file of routePathRoots, test files included,
// but the generated clients (lambdas/client/<service>/client.gen.go, made
// from docs/api, itself made from the contract).
func TestRoutePathsComeFromTheContract(t *testing.T) {
	c := namesOfContracts(t)
	paths := contractNames{fragments: c.fragments}
	fset := token.NewFileSet()
	files := 0
	used := map[string]bool{}
	for _, root := range routePathRoots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != root && (d.Name() == "third_party" || d.Name() == "node_modules" || d.Name() == "cdk.out" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") {
				return nil
			}
			if !pathChecked(path) {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
			if err != nil {
				return err
			}
			files++
			if ast.IsGenerated(f) {
				rel, _ := filepath.Rel(".", path)
				assert.Regexp(t, `^\.\./client/[a-z]+/client\.gen\.go$`, filepath.ToSlash(rel), "only the typed clients are generated code the paths check skips")
				return nil
			}
			for _, found := range routePathLiterals(fset, f, paths, allowedPaths[repoPath(path)], used) {
				assert.Fail(t, "a route path written outside the contract", found)
			}
			return nil
		})
		require.NoError(t, err, root)
	}
	require.GreaterOrEqual(t, files, 440, "Go files checked: are the roots right?")
	for file, lits := range allowedPaths {
		for lit := range lits {
			assert.True(t, used[file+" "+lit], "allowedPaths: %s no longer writes %s; take it off the list", file, lit)
		}
	}
}

// routePathLiterals says where f writes a string literal starting like a
// route's path, but those allowed (literal as written: why), and marks
// the allowed ones it met in used ("file literal").
func routePathLiterals(fset *token.FileSet, f *ast.File, paths contractNames, allowed map[string]string, used map[string]bool) []string {
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, _ := strconv.Unquote(lit.Value)
		what := paths.check("", s)
		if what == "" {
			return true
		}
		pos := fset.Position(lit.Pos())
		if _, ok := allowed[lit.Value]; ok {
			used[repoPath(pos.Filename)+" "+lit.Value] = true
			return true
		}
		found = append(found, fmt.Sprintf("%s: %s is %s (or call the generated client, lambdas/client; in a service's test, servicetest's MustRoute)", pos, lit.Value, what))
		return true
	})
	return found
}

// repoPath is path (relative to this directory) relative to the
// repository root, with slashes.
func repoPath(path string) string {
	root, err1 := filepath.Abs("../..")
	abs, err2 := filepath.Abs(path)
	rel, err3 := filepath.Rel(root, abs)
	if err1 != nil || err2 != nil || err3 != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

// TestRoutePathLiteralsAreFound: the check of
// TestRoutePathsComeFromTheContract fails on a path written by hand in a
// service's test, absolute or as a Location, with a query or built by
// concatenation, lets the contract's Route.URL and an allowed literal
// pass, and says which file and line.
func TestRoutePathLiteralsAreFound(t *testing.T) {
	paths := contractNames{fragments: namesOfContracts(t).fragments}
	tests := []struct {
		name, body string
		allowed    map[string]string
		want       []string
	}{
		{"a path by hand", `s.Must(t, 200, "GET", "/tickets/"+id, "", nil)`, nil, []string{`x_test.go:4:24: "/tickets/" is a route path (/tickets…)`}},
		{"a query by hand", `s.Do(t, "GET", "/tickets?caller=a", "")`, nil, []string{`x_test.go:4:17: "/tickets?caller=a" is a route path (/tickets…)`}},
		{"a Location by hand", `assert.Equal(t, "tickets/"+id, loc)`, nil, []string{`x_test.go:4:18: "tickets/" is a route path (/tickets…)`}},
		{"a service's route", `s.Must(t, 200, "PUT", "/tenants/acme/settings", "", nil)`, nil, []string{`x_test.go:4:24: "/tenants/acme/settings" is a route path (/tenants…)`}},
		{"the contract's route", `s.MustRoute(t, 200, contract.GetTicket, "", nil, id)`, nil, nil},
		{"its method and URL", `s.Do(t, contract.ListTickets.Method, contract.ListTickets.URLQuery(q), "")`, nil, nil},
		{"an allowed literal", `s.Do(t, "PUT", "/tenants/a*/settings", "")`, map[string]string{`"/tenants/a*/settings"`: "why"}, nil},
		{"not a route", `s.Do(t, "GET", "/no/such/route", "")`, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			src := "package x_test\n\nfunc f() {\n\t" + tt.body + "\n}\n"
			f, err := parser.ParseFile(fset, "x_test.go", src, parser.SkipObjectResolution)
			require.NoError(t, err)
			got := routePathLiterals(fset, f, paths, tt.allowed, map[string]bool{})
			require.Len(t, got, len(tt.want), "%v", got)
			for i, w := range tt.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}

// pathChecked: path (relative to this directory) is non-test code, or a
// test of checkedTests.
func pathChecked(path string) bool {
	if !strings.HasSuffix(path, "_test.go") {
		return true
	}
	root, err1 := filepath.Abs("../..")
	abs, err2 := filepath.Abs(path)
	rel, err3 := filepath.Rel(root, abs)
	if err1 != nil || err2 != nil || err3 != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	return slices.ContainsFunc(checkedTests, func(dir string) bool { return strings.HasPrefix(rel, dir) })
}
