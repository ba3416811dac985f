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
)

// TestContractsValid checks every contract: kinds, routes, unique names.
func TestContractsValid(t *testing.T) {
	names := map[string]string{}
	for _, s := range catalog.Services() {
		if err := s.Validate(); err != nil {
			t.Error(err)
		}
		if len(s.Tables) == 0 || len(s.Functions) == 0 {
			t.Errorf("service %s declares %d tables and %d functions: every document has both", s.Name, len(s.Tables), len(s.Functions))
		}
		for _, f := range s.Functions {
			if prev, dup := names[f.Name]; dup {
				t.Errorf("function %q is in both %s and %s", f.Name, prev, s.Name)
			}
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
					t.Errorf("%s = %q is not in the contract's Attributes", c.name, c.value)
				case (strings.HasPrefix(c.name, "Prefix") || strings.HasPrefix(c.name, "Key")) && !slices.Contains(parts, c.value):
					t.Errorf("%s = %q is not in the contract's KeyParts", c.name, c.value)
				case c.typ == "service.PathParam" && !paths[c.value]:
					t.Errorf("path parameter %s = %q: no route's path names it", c.name, c.value)
				case c.typ == "service.QueryParam" && !queries[c.value]:
					t.Errorf("query parameter %s = %q: no route's Query lists it", c.name, c.value)
				}
			}
			for _, v := range append(attrs, parts...) {
				if !declared[v] {
					t.Errorf("%q is listed in the contract but declared by no constant", v)
				}
			}
			for p := range paths {
				if !typed["service.PathParam "+p] {
					t.Errorf("path parameter %q: declare it as a service.PathParam constant", p)
				}
			}
			for q := range queries {
				if !typed["service.QueryParam "+q] && q != service.Limit.String() && q != service.Cursor.String() {
					t.Errorf("query parameter %q: declare it as a service.QueryParam constant", q)
				}
			}
		})
	}
}

type contractConst struct{ name, typ, value string }

// contractConsts are the string constants of the package in dir, with
// their declared type ("" when untyped).
func contractConsts(t *testing.T, dir string) []contractConst {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var out []contractConst
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
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
		}
	}
	return out
}
