package checkcache_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dynastack/dynastack/infra/checkcache"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeyFollowsEveryInput(t *testing.T) {
	dir := t.TempDir()
	tpl := filepath.Join(dir, "a.template.json")
	write := func(s string) {
		require.NoError(t, os.WriteFile(tpl, []byte(s), 0o644))
	}
	key := func(salt string, extra ...string) string {
		k, err := checkcache.Open(filepath.Join(dir, "cache"), salt).Key(tpl, extra...)
		require.NoError(t, err)
		return k
	}
	write(`{"Resources":{}}`)
	base := key("validate 1.14.0", "123456789012", "eu-west-1")
	require.Equal(t, base, key("validate 1.14.0", "123456789012", "eu-west-1"), "same inputs, different keys")
	for name, k := range map[string]string{
		"checker version": key("validate 1.15.0", "123456789012", "eu-west-1"),
		"region":          key("validate 1.14.0", "123456789012", "us-east-1"),
		"split inputs":    key("validate 1.14.0", "1234567890", "12eu-west-1"),
	} {
		assert.NotEqual(t, base, k, "%s changed, key did not", name)
	}
	write(`{"Resources":{"Q":{"Type":"AWS::SQS::Queue"}}}`)
	assert.NotEqual(t, base, key("validate 1.14.0", "123456789012", "eu-west-1"), "template changed, key did not")
	_, err := checkcache.Open(dir, "x").Key(filepath.Join(dir, "missing.json"))
	assert.Error(t, err, "a missing template has a key")
}

func TestGetPutPrune(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	type verdict struct{ Findings []string }

	c := checkcache.Open(dir, "controls")
	var v verdict
	require.False(t, c.Get("k1", &v), "hit in an empty cache")
	for _, k := range []string{"k1", "k2"} {
		require.NoError(t, c.Put(k, verdict{Findings: []string{"CT.SQS.PR.1 " + k}}))
	}
	require.True(t, c.Get("k1", &v), "Get after Put: miss")
	require.Equal(t, []string{"CT.SQS.PR.1 k1"}, v.Findings, "Get after Put")
	// A corrupt entry is a miss, not an error or a wrong verdict.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "k3.json"), []byte("{"), 0o644))
	assert.False(t, c.Get("k3", &v), "corrupt entry read as a hit")

	// The next synth uses k2 only: Prune drops k1 and the corrupt k3.
	next := checkcache.Open(dir, "controls")
	require.True(t, next.Get("k2", &v), "entry lost between synths")
	require.NoError(t, next.Prune())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	if assert.Len(t, entries, 1, "after Prune: want only k2.json") {
		assert.Equal(t, "k2.json", entries[0].Name(), "after Prune")
	}
	assert.NoError(t, checkcache.Open(filepath.Join(dir, "none"), "x").Prune(), "Prune of a cache never written")
}

func TestVerdictKeep(t *testing.T) {
	dir := t.TempDir()
	tpl := filepath.Join(dir, "a.template.json")
	require.NoError(t, os.WriteFile(tpl, []byte(`{"Resources":{}}`), 0o644))
	var v []string
	c := checkcache.Open(filepath.Join(dir, "cache"), "controls")
	require.False(t, c.Verdict(tpl, &v, "eu-west-1"), "verdict in an empty cache")
	c.Keep(tpl, []string{"CT.SQS.PR.1"})
	next := checkcache.Open(filepath.Join(dir, "cache"), "controls")
	require.True(t, next.Verdict(tpl, &v, "eu-west-1"), "kept verdict not read back")
	require.Equal(t, []string{"CT.SQS.PR.1"}, v, "kept verdict not read back")
	assert.False(t, next.Verdict(tpl, &v, "us-east-1"), "verdict read under other inputs")
	// Keep without a Verdict call for the path has no key: nothing is kept.
	other := filepath.Join(dir, "b.template.json")
	next.Keep(other, []string{"x"})
	assert.False(t, next.Verdict(other, &v), "a verdict kept without a key")

	var none *checkcache.Cache
	assert.False(t, none.Verdict(tpl, &v), "a nil cache has a verdict")
	none.Keep(tpl, v)
	assert.NoError(t, none.Prune())
}
