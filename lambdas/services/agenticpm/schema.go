package agenticpm

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/jsonschema"
)

// The JSON Schemas of the artefact types (design document 004, section
// 4.2), one file per type under schemas/, each compiled with its formats
// asserted on its first use, not at init: compiling the four took about
// 3 ms (1 MB in 14,000 allocations) of every AgenticPM cold start, the
// release job's too, which validates no content (docs/functions.md, "Cold
// start"). A schema that does not compile fails every test
// (TestEveryArtefactSchemaCompiles) and panics on its first use.
// docs/schemas/agenticpm.md decision 21 says how strict they are.
//
//go:embed schemas/*.json
var schemaFiles embed.FS

// artefactSchemas holds each type's compile-once function.
var artefactSchemas = func() map[ArtefactType]func() *jsonschema.Schema {
	out := make(map[ArtefactType]func() *jsonschema.Schema, len(ArtefactTypes))
	for _, t := range ArtefactTypes {
		out[t] = sync.OnceValue(func() *jsonschema.Schema {
			s, err := compileSchema(t)
			if err != nil {
				panic(err.Error())
			}
			return s
		})
	}
	return out
}()

// compileSchema compiles the schema of t.
func compileSchema(t ArtefactType) (*jsonschema.Schema, error) {
	b := ArtefactSchema(t)
	if b == nil {
		return nil, fmt.Errorf("agenticpm: artefact schema of %s: no schemas/%s.json", t, t)
	}
	s, err := jsonschema.Compile(b, jsonschema.AssertFormats())
	if err != nil {
		return nil, fmt.Errorf("agenticpm: artefact schema of %s: %w", t, err)
	}
	return s, nil
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
	compiled := artefactSchemas[t]
	if compiled == nil || content.Kind() != "object" {
		return
	}
	sch := compiled()
	d := json.NewDecoder(bytes.NewReader(content))
	d.UseNumber()
	var inst any
	if err := d.Decode(&inst); err != nil {
		v.Add("content", "is not valid JSON: %v", err)
		return
	}
	sch.Check(v, "content", inst)
}
