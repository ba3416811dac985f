package agenticpm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbfault"
	"github.com/dynastack/dynastack/lambdas/devtools/servicetest"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

// An artefact update whose answer DynamoDB lost after applying it answers
// 200 with the new version, not the 409 its own first attempt would cause
// (the version moved on); a create goes in one transaction, which the
// SDK's client request token already makes idempotent.
func TestArtefactWritesWithLostAnswers(t *testing.T) {
	s := newService(t, nil)
	p := s.project(t, "")
	client, proxy := servicetest.FaultyClient(t, "agenticpm")
	cfg := s.cfg
	cfg.Client = client
	lossy := s.Service
	lossy.H = newAPI(cfg)

	proxy.Next(ddbfault.DropAnswer, 1)
	var v1 agenticpm.Artefact
	lossy.MustRoute(t, 201, contract.PutArtefact, `{"content":{"items":[]}}`, &v1, p.ID, "raid_log")

	proxy.Next(ddbfault.DropAnswer, 1)
	before := proxy.Requests()
	var v2 agenticpm.Artefact
	lossy.MustRoute(t, 200, contract.PutArtefact, `{"content":{"items":[{"id":"R001","severity":"high","status":"open","title":"Vendor EOL","type":"risk"}]},"expectedVersion":1}`, &v2, p.ID, "raid_log")
	require.Equal(t, 3, proxy.Requests()-before, "requests for the update (a read, then the transaction twice): the lost answer was not retried")
	var stored agenticpm.Artefact
	s.MustRoute(t, 200, contract.GetArtefact, "", &stored, p.ID, "raid_log")
	assert.Equal(t, 1, v1.Version, "version of the create")
	assert.Equal(t, 2, v2.Version, "version of the update")
	assert.Equal(t, 2, stored.Version, "stored version")
	assert.Equal(t, `{"items":[]}`, string(stored.PreviousVersion), "stored previous version: the first content")
}
