package openapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/devtools/openapi"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// Each operation's operationId is its route's Operation, as the contract
// names it: the typed clients name their methods after it.
func TestOperationIDsAreTheContracts(t *testing.T) {
	doc, err := openapi.Document(things, operations)
	require.NoError(t, err)
	assert.Equal(t, getThing.Operation, doc.Paths.Find("/things/{id}").Get.OperationID, "GET /things/{id}")
	assert.Equal(t, createThing.Operation, doc.Paths.Find("/things").Post.OperationID, "POST /things")

	unnamed := things
	unnamed.Functions = []service.Function{{Name: "things", Kind: service.HTTP, Routes: []service.Route{{Method: "GET", Path: "/things/{id}"}}}}
	_, err = openapi.Document(unnamed, operations[:1])
	assert.ErrorContains(t, err, `operation "": name it in lower camel case`, "a route without an Operation")
}

// A body type two operations share is one named schema both refer to; a
// type one operation uses stays inline; an answer whose secrets a replay
// leaves out requires less than its type, so it stays inline too.
func TestSharedBodiesAreNamedSchemas(t *testing.T) {
	doc, err := openapi.Document(things, operations)
	require.NoError(t, err)
	require.Contains(t, doc.Components.Schemas, "Thing", "the shared answer type, by its Go name upper-cased")
	assert.ElementsMatch(t, []string{"id", "count", "tags"}, doc.Components.Schemas["Thing"].Value.Required, "Thing: an answer's required fields")
	get := doc.Paths.Find("/things/{id}").Get.Responses.Status(http.StatusOK).Value.Content["application/json"].Schema
	create := doc.Paths.Find("/things").Post.Responses.Status(http.StatusCreated).Value.Content["application/json"].Schema
	assert.Equal(t, "#/components/schemas/Thing", get.Ref, "GET's answer")
	assert.Equal(t, "#/components/schemas/Thing", create.Ref, "POST's answer")
	assert.Empty(t, doc.Paths.Find("/things").Post.RequestBody.Value.Content["application/json"].Schema.Ref, "a request body one operation uses: inline")
	assert.NotContains(t, doc.Components.Schemas, "ThingRequest", "a request body one operation uses")

	secret := operations[1]
	secret.Secrets = []string{"id"}
	doc, err = openapi.Document(things, []api.Operation{operations[0], secret})
	require.NoError(t, err)
	inline := doc.Paths.Find("/things").Post.Responses.Status(http.StatusCreated).Value.Content["application/json"].Schema
	assert.Empty(t, inline.Ref, "an answer with secrets: inline")
	assert.ElementsMatch(t, []string{"count", "tags"}, inline.Value.Required, "an answer with secrets: its secret not required")
	assert.NotContains(t, doc.Components.Schemas, "Thing", "one operation left to use the type as it is")
}
