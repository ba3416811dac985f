package agenticpmapi

import (
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

// TestEveryArtefactSchemaCompiles: schemas compile on first use, not at
// init, so this is where a schema that does not compile fails, before any
// request meets it.
func TestEveryArtefactSchemaCompiles(t *testing.T) {
	for _, typ := range agenticpm.ArtefactTypes {
		if _, err := compileSchema(typ); err != nil {
			t.Error(err)
		}
		if artefactSchemas[typ]() == nil {
			t.Errorf("%s: no compiled schema", typ)
		}
	}
	if _, err := compileSchema("no_such_type"); err == nil || !strings.Contains(err.Error(), "schemas/no_such_type.json") {
		t.Errorf("unknown type: %v", err)
	}
}
