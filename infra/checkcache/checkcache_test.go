package checkcache_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dynastack/dynastack/infra/checkcache"
)

func TestKeyFollowsEveryInput(t *testing.T) {
	dir := t.TempDir()
	tpl := filepath.Join(dir, "a.template.json")
	write := func(s string) {
		if err := os.WriteFile(tpl, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	key := func(salt string, extra ...string) string {
		k, err := checkcache.Open(filepath.Join(dir, "cache"), salt).Key(tpl, extra...)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write(`{"Resources":{}}`)
	base := key("validate 1.14.0", "123456789012", "eu-west-1")
	if again := key("validate 1.14.0", "123456789012", "eu-west-1"); again != base {
		t.Fatalf("same inputs, different keys: %s, %s", base, again)
	}
	for name, k := range map[string]string{
		"checker version": key("validate 1.15.0", "123456789012", "eu-west-1"),
		"region":          key("validate 1.14.0", "123456789012", "us-east-1"),
		"split inputs":    key("validate 1.14.0", "1234567890", "12eu-west-1"),
	} {
		if k == base {
			t.Errorf("%s changed, key did not", name)
		}
	}
	write(`{"Resources":{"Q":{"Type":"AWS::SQS::Queue"}}}`)
	if key("validate 1.14.0", "123456789012", "eu-west-1") == base {
		t.Error("template changed, key did not")
	}
	if _, err := checkcache.Open(dir, "x").Key(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing template has a key")
	}
}

func TestGetPutPrune(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	type verdict struct{ Findings []string }

	c := checkcache.Open(dir, "controls")
	var v verdict
	if c.Get("k1", &v) {
		t.Fatal("hit in an empty cache")
	}
	for _, k := range []string{"k1", "k2"} {
		if err := c.Put(k, verdict{Findings: []string{"CT.SQS.PR.1 " + k}}); err != nil {
			t.Fatal(err)
		}
	}
	if !c.Get("k1", &v) || len(v.Findings) != 1 || v.Findings[0] != "CT.SQS.PR.1 k1" {
		t.Fatalf("Get after Put: %+v", v)
	}
	// A corrupt entry is a miss, not an error or a wrong verdict.
	if err := os.WriteFile(filepath.Join(dir, "k3.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c.Get("k3", &v) {
		t.Error("corrupt entry read as a hit")
	}

	// The next synth uses k2 only: Prune drops k1 and the corrupt k3.
	next := checkcache.Open(dir, "controls")
	if !next.Get("k2", &v) {
		t.Fatal("entry lost between synths")
	}
	if err := next.Prune(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "k2.json" {
		t.Errorf("after Prune: %v, want only k2.json", entries)
	}
	if err := checkcache.Open(filepath.Join(dir, "none"), "x").Prune(); err != nil {
		t.Errorf("Prune of a cache never written: %v", err)
	}
}

func TestVerdictKeep(t *testing.T) {
	dir := t.TempDir()
	tpl := filepath.Join(dir, "a.template.json")
	if err := os.WriteFile(tpl, []byte(`{"Resources":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var v []string
	c := checkcache.Open(filepath.Join(dir, "cache"), "controls")
	if c.Verdict(tpl, &v, "eu-west-1") {
		t.Fatal("verdict in an empty cache")
	}
	c.Keep(tpl, []string{"CT.SQS.PR.1"})
	next := checkcache.Open(filepath.Join(dir, "cache"), "controls")
	if !next.Verdict(tpl, &v, "eu-west-1") || len(v) != 1 || v[0] != "CT.SQS.PR.1" {
		t.Fatalf("kept verdict not read back: %v", v)
	}
	if next.Verdict(tpl, &v, "us-east-1") {
		t.Error("verdict read under other inputs")
	}
	// Keep without a Verdict call for the path has no key: nothing is kept.
	other := filepath.Join(dir, "b.template.json")
	next.Keep(other, []string{"x"})
	if next.Verdict(other, &v) {
		t.Error("a verdict kept without a key")
	}

	var none *checkcache.Cache
	if none.Verdict(tpl, &v) {
		t.Error("a nil cache has a verdict")
	}
	none.Keep(tpl, v)
	if err := none.Prune(); err != nil {
		t.Error(err)
	}
}
