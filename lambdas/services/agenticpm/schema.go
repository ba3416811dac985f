package agenticpm

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// The JSON Schemas of the artefact types (design document 004, section
// 4.2), one file per type under schemas/, compiled once at init: a schema
// that does not compile is a failed init, in every test and in Lambda.
// docs/schemas/agenticpm.md decision 21 says how strict they are.
//
//go:embed schemas/*.json
var schemaFiles embed.FS

var artefactSchemas = compileSchemas()

func compileSchemas() map[ArtefactType]*jsonschema.Schema {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	out := map[ArtefactType]*jsonschema.Schema{}
	for _, t := range ArtefactTypes {
		name := "schemas/" + string(t) + ".json"
		b, err := schemaFiles.ReadFile(name)
		if err != nil {
			panic(fmt.Sprintf("agenticpm: artefact schema %s: %v", name, err))
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			panic(fmt.Sprintf("agenticpm: artefact schema %s: %v", name, err))
		}
		if err := c.AddResource(name, doc); err != nil {
			panic(fmt.Sprintf("agenticpm: artefact schema %s: %v", name, err))
		}
		if out[t], err = c.Compile(name); err != nil {
			panic(fmt.Sprintf("agenticpm: artefact schema %s: %v", name, err))
		}
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

// printer words the validator's messages.
var printer = message.NewPrinter(language.English)

// maxSchemaErrors bounds the violations one answer lists.
const maxSchemaErrors = 10

// validateContent checks content against its type's schema and adds one
// field per violation, named by its JSON path under content
// (content.milestones[0].status), so the client sees where and what.
func validateContent(v *api.Validator, t ArtefactType, content Doc) {
	sch := artefactSchemas[t]
	if sch == nil || content.Kind() != "object" {
		return
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(content))
	if err != nil {
		v.Add("content", "is not valid JSON: %v", err)
		return
	}
	err = sch.Validate(inst)
	var ve *jsonschema.ValidationError
	if err == nil || !errors.As(err, &ve) {
		return
	}
	var leaves []*jsonschema.ValidationError
	collectLeaves(ve, &leaves)
	slices.SortStableFunc(leaves, func(a, b *jsonschema.ValidationError) int {
		return strings.Compare(jsonPath(a.InstanceLocation), jsonPath(b.InstanceLocation))
	})
	for i, l := range leaves {
		if i == maxSchemaErrors {
			v.Add("content", "has %d more schema violations; see the %s schema on the doc page", len(leaves)-i, t)
			break
		}
		v.Add(jsonPath(l.InstanceLocation), "%s (the %s schema)", l.ErrorKind.LocalizedString(printer), t)
	}
}

func collectLeaves(e *jsonschema.ValidationError, out *[]*jsonschema.ValidationError) {
	if len(e.Causes) == 0 {
		*out = append(*out, e)
		return
	}
	for _, c := range e.Causes {
		collectLeaves(c, out)
	}
}

// jsonPath names an instance location under the request's content field:
// ["milestones","0","status"] is content.milestones[0].status.
func jsonPath(loc []string) string {
	var b strings.Builder
	b.WriteString("content")
	for _, p := range loc {
		if _, err := strconv.Atoi(p); err == nil {
			b.WriteString("[" + p + "]")
			continue
		}
		b.WriteString("." + p)
	}
	return b.String()
}
