package catalog_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
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

// TestContractsValid checks every contract: kinds, routes, unique names.
func TestContractsValid(t *testing.T) {
	names := map[string]string{}
	for _, s := range catalog.Services() {
		assert.NoError(t, s.Validate())
		assert.NotEmpty(t, s.Tables, "service %s declares no tables: every document has tables and functions", s.Name)
		assert.NotEmpty(t, s.Functions, "service %s declares no functions: every document has tables and functions", s.Name)
		for _, f := range s.Functions {
			assert.NotContains(t, names, f.Name, "function %q is in both %s and %s", f.Name, names[f.Name], s.Name)
			names[f.Name] = s.Name
		}
	}
}

// TestContractsDeclareEachNameOnce reads each contract's source: every
// attribute constant (Attr…) is in the contract's Attributes and every
// key constant (Prefix…, Key…) in its KeyParts, which list nothing the
// contract does not declare; every path and query parameter a route
// names is a PathParam or QueryParam constant of the contract (or
// service.Limit and service.Cursor), and every such constant is used by a
// route. So a name is written once, as a constant, and the lists the
// checks of the lambdas module read (TestNamesComeFromTheContract) hold
// all of them.
func TestContractsDeclareEachNameOnce(t *testing.T) {
	for _, s := range catalog.Services() {
		t.Run(s.Name, func(t *testing.T) {
			consts := contractConsts(t, filepath.Join("..", s.Name, "contract"))
			attrs, parts := s.Attributes, s.KeyParts
			paths, queries := map[string]bool{}, map[string]bool{service.Limit.String(): true, service.Cursor.String(): true}
			for _, f := range s.Functions {
				for _, r := range f.Routes {
					for _, p := range r.Params() {
						paths[p.String()] = true
					}
					for _, q := range r.Query {
						queries[q.String()] = true
					}
				}
			}
			declared, typed := map[string]bool{}, map[string]bool{}
			for _, c := range consts {
				declared[c.value] = true
				typed[c.typ+" "+c.value] = true
				switch {
				case strings.HasPrefix(c.name, "Attr") && !slices.Contains(attrs, c.value):
					assert.Failf(t, "attribute not in Attributes", "%s = %q is not in the contract's Attributes", c.name, c.value)
				case (strings.HasPrefix(c.name, "Prefix") || strings.HasPrefix(c.name, "Key")) && !slices.Contains(parts, c.value):
					assert.Failf(t, "key part not in KeyParts", "%s = %q is not in the contract's KeyParts", c.name, c.value)
				case c.typ == "service.PathParam" && !paths[c.value]:
					assert.Failf(t, "unused path parameter", "path parameter %s = %q: no route's path names it", c.name, c.value)
				case c.typ == "service.QueryParam" && !queries[c.value]:
					assert.Failf(t, "unused query parameter", "query parameter %s = %q: no route's Query lists it", c.name, c.value)
				}
			}
			for _, v := range append(attrs, parts...) {
				assert.True(t, declared[v], "%q is listed in the contract but declared by no constant", v)
			}
			for p := range paths {
				assert.True(t, typed["service.PathParam "+p], "path parameter %q: declare it as a service.PathParam constant", p)
			}
			for q := range queries {
				if q != service.Limit.String() && q != service.Cursor.String() {
					assert.True(t, typed["service.QueryParam "+q], "query parameter %q: declare it as a service.QueryParam constant", q)
				}
			}
		})
	}
}

// TestOperationIsTheRoutesName reads each contract's source: every route
// is a package variable (CreateTicket = service.Route{…}) whose Operation
// is its own name in lower camel case ("createTicket"), so the contract,
// the OpenAPI document's operationId and the typed client's method
// (CreateTicketWithResponse) call a route by one name; and the contract's
// functions serve exactly those routes.
func TestOperationIsTheRoutesName(t *testing.T) {
	for _, s := range catalog.Services() {
		t.Run(s.Name, func(t *testing.T) {
			declared := contractRoutes(t, filepath.Join("..", s.Name, "contract"))
			require.NotEmpty(t, declared, "no service.Route variable in %s's contract", s.Name)
			for name, op := range declared {
				assert.Equal(t, strings.ToLower(name[:1])+name[1:], op, "route %s: Operation", name)
			}
			var served []string
			for _, f := range s.Functions {
				for _, r := range f.Routes {
					served = append(served, r.Operation)
				}
			}
			var vars []string
			for _, op := range declared {
				vars = append(vars, op)
			}
			assert.ElementsMatch(t, vars, served, "the operations of the route variables and of the functions' Routes")
		})
	}
}

// valueSpecs are the declarations of kind tok (token.VAR, token.CONST) in
// the non-test Go files of the package in dir.
func valueSpecs(t *testing.T, dir string, tok token.Token) []*ast.ValueSpec {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err, "Go files in %s", dir)
	require.NotEmpty(t, files, "no Go files in %s", dir)
	var out []*ast.ValueSpec
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == tok {
				for _, spec := range g.Specs {
					out = append(out, spec.(*ast.ValueSpec))
				}
			}
		}
	}
	return out
}

// contractRoutes maps each package variable of dir declared as a
// service.Route literal to its Operation ("" when it has none).
func contractRoutes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, vs := range valueSpecs(t, dir, token.VAR) {
		for i, n := range vs.Names {
			if i >= len(vs.Values) {
				continue
			}
			lit, ok := vs.Values[i].(*ast.CompositeLit)
			if !ok || fmt.Sprint(lit.Type) != "&{service Route}" {
				continue
			}
			out[n.Name] = ""
			for _, e := range lit.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok || fmt.Sprint(kv.Key) != "Operation" {
					continue
				}
				if bl, ok := kv.Value.(*ast.BasicLit); ok && bl.Kind == token.STRING {
					out[n.Name], _ = strconv.Unquote(bl.Value)
				}
			}
		}
	}
	return out
}

type contractConst struct{ name, typ, value string }

// contractConsts are the string constants of the package in dir, with
// their declared type ("" when untyped).
func contractConsts(t *testing.T, dir string) []contractConst {
	t.Helper()
	var out []contractConst
	for _, vs := range valueSpecs(t, dir, token.CONST) {
		typ := ""
		if sel, ok := vs.Type.(*ast.SelectorExpr); ok {
			typ = fmt.Sprint(sel.X) + "." + sel.Sel.Name
		}
		for i, n := range vs.Names {
			if i >= len(vs.Values) {
				continue
			}
			if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				v, _ := strconv.Unquote(lit.Value)
				out = append(out, contractConst{n.Name, typ, v})
			}
		}
	}
	return out
}
