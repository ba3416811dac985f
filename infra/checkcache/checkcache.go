// Package checkcache keeps the verdict of a check on one template, keyed by
// the template's bytes and everything else the verdict depends on, so that
// a synth re-checks only the templates that changed since the last one: the
// Go build cache's idea, applied to CloudFormation validation and the
// Control Tower controls, which take most of a synth's time and give the
// same answer for the same input.
//
// A Cache lives in the cloud assembly directory (cdk.out), so `make clean`
// empties it and a fresh clone starts cold. Entries a synth did not use are
// removed by Prune: the folder holds one entry per check per template.
package checkcache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Cache is one check's verdicts in a folder. A nil *Cache keeps nothing:
// every Verdict misses, Keep and Prune do nothing.
type Cache struct {
	dir, salt string
	mu        sync.Mutex
	used      map[string]bool
	keys      map[string]string // template path → key, from Verdict
}

// Open returns the cache of one check in dir. Salt names the check and
// everything its verdicts depend on besides the template: the version of
// the checker and of its rules, its configuration. A different salt never
// reads another's entries.
func Open(dir, salt string) *Cache {
	return &Cache{dir: dir, salt: salt, used: map[string]bool{}, keys: map[string]string{}}
}

// Verdict reads the verdict kept for the template at path into v, and
// reports whether there was one. Extra are the per-template inputs of the
// key (Key). The key is remembered for Keep.
func (c *Cache) Verdict(path string, v any, extra ...string) bool {
	if c == nil {
		return false
	}
	key, err := c.Key(path, extra...)
	if err != nil {
		return false // an unreadable template is checked, and fails there
	}
	c.mu.Lock()
	c.keys[path] = key
	c.mu.Unlock()
	return c.Get(key, v)
}

// Keep stores v as the verdict of the template at path, under the key its
// Verdict call computed. A verdict that cannot be kept is only checked
// again next time, so Keep reports nothing.
func (c *Cache) Keep(path string, v any) {
	if c == nil {
		return
	}
	c.mu.Lock()
	key, ok := c.keys[path]
	c.mu.Unlock()
	if ok {
		_ = c.Put(key, v)
	}
}

// Key is the entry of the template at path: a hash of the salt, extra (the
// per-template inputs, such as the stack's account and region) and the
// template's bytes.
func (c *Cache) Key(path string, extra ...string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, s := range append([]string{c.salt}, extra...) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(raw)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Get reads the verdict stored under key into v. A missing or unreadable
// entry is a miss.
func (c *Cache) Get(key string, v any) bool {
	raw, err := os.ReadFile(c.path(key))
	if err != nil || json.Unmarshal(raw, v) != nil {
		return false
	}
	c.use(key)
	return true
}

// Put stores v under key. The entry is written to a temporary file and
// renamed, so a reader never sees half of it.
func (c *Cache) Put(key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(c.dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(raw)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), c.path(key))
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return werr
	}
	c.use(key)
	return nil
}

// Prune removes the entries that no Get or Put of this Cache touched.
func (c *Cache) Prune() error {
	if c == nil {
		return nil
	}
	entries, err := os.ReadDir(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !c.used[key] {
			errs = append(errs, os.Remove(filepath.Join(c.dir, e.Name())))
		}
	}
	return errors.Join(errs...)
}

func (c *Cache) path(key string) string { return filepath.Join(c.dir, key+".json") }

func (c *Cache) use(key string) {
	c.mu.Lock()
	c.used[key] = true
	c.mu.Unlock()
}
