package agenticpm

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/jsonschema"
)

// The JSON Schemas of the artefact types (design document 004, section
// 4.2), one file per type under schemas/, compiled once at init with their
// formats asserted: a schema that does not compile is a failed init, in
// every test and in Lambda. docs/schemas/agenticpm.md decision 21 says how
// strict they are.
//
//go:embed schemas/*.json
var schemaFiles embed.FS

var artefactSchemas = compileSchemas()

func compileSchemas() map[ArtefactType]*jsonschema.Schema {
	out := map[ArtefactType]*jsonschema.Schema{}
	for _, t := range ArtefactTypes {
		b := ArtefactSchema(t)
		s, err := jsonschema.Compile(b, jsonschema.AssertFormats())
		if b == nil || err != nil {
			panic(fmt.Sprintf("agenticpm: artefact schema of %s: %v", t, err))
		}
		out[t] = s
	}
	return out
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
func validateContent(v *api.Validator, t ArtefactType, content Doc) {
	sch := artefactSchemas[t]
	if sch == nil || content.Kind() != "object" {
		return
	}
	d := json.NewDecoder(bytes.NewReader(content))
	d.UseNumber()
	var inst any
	if err := d.Decode(&inst); err != nil {
		v.Add("content", "is not valid JSON: %v", err)
		return
	}
	sch.Check(v, "content", inst)
}
