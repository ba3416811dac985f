package agenticpm

import (
	"bytes"
	"embed"
	"encoding/json"
	"slices"

	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// The JSON Schemas of the artefact types (design document 004, section
// 4.2), one file per type under schemas/. docs/schemas/agenticpm.md
// decision 21 says how strict they are.
//
//go:embed schemas/*.json
var schemaFiles embed.FS

// ContentSchemas is what the API needs of a JSON Schema implementation to
// check artefact content against its type's schema (ArtefactSchema). Its
// binding to platform/bodyschema is in package agenticpmapi
// (services/agenticpm/agenticpmapi), which compiles each schema with its
// formats asserted on its first use: the library's package initialiser
// compiles the metaschemas of five drafts, about 4 ms of every start of a
// bootstrap that links it, and the release job, which links this package,
// validates no content (docs/functions.md, "Cold start").
type ContentSchemas interface {
	// Check adds one field error to v per violation of value (as
	// encoding/json decodes into an any, numbers as json.Number) against
	// the schema of t, named field plus the JSON path of the offending
	// value (content.milestones[0].status).
	Check(v *api.Validator, field string, t ArtefactType, value any)
}

// ArtefactSchema returns the JSON Schema document of an artefact type, as
// kept in the repository (nil for an unknown type).
func ArtefactSchema(t ArtefactType) []byte {
	b, err := schemaFiles.ReadFile("schemas/" + string(t) + ".json")
	if err != nil {
		return nil
	}
	return b
}

// validateContent checks content against its type's schema and adds one
// field per violation, named by its JSON path under content
// (content.milestones[0].status), so the client sees where and what.
func validateContent(v *api.Validator, schemas ContentSchemas, t ArtefactType, content Doc) {
	if !slices.Contains(ArtefactTypes, t) || content.Kind() != "object" {
		return
	}
	d := json.NewDecoder(bytes.NewReader(content))
	d.UseNumber()
	var inst any
	if err := d.Decode(&inst); err != nil {
		v.Add("content", "is not valid JSON: %v", err)
		return
	}
	schemas.Check(v, "content", t, inst)
}
