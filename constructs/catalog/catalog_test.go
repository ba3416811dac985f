package catalog_test

import (
	"testing"

	"github.com/dynastack/dynastack/constructs/catalog"
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
