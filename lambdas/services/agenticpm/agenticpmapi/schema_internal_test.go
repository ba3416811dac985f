package agenticpmapi

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

// TestEveryArtefactSchemaCompiles: schemas compile on first use, not at
// init, so this is where a schema that does not compile fails, before any
// request meets it.
func TestEveryArtefactSchemaCompiles(t *testing.T) {
	for _, typ := range agenticpm.ArtefactTypes {
		_, err := compileSchema(typ)
		assert.NoError(t, err, "%s: compile", typ)
		assert.NotNil(t, artefactSchemas[typ](), "%s: no compiled schema", typ)
	}
	_, err := compileSchema("no_such_type")
	assert.ErrorContains(t, err, "schemas/no_such_type.json", "unknown type")
}
