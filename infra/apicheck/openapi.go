package apicheck

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// OASDiff is the pinned oasdiff, which compares two OpenAPI documents and
// classes each change (breaking: level ERR).
const (
	OASDiffPackage = "github.com/oasdiff/oasdiff"
	OASDiffVersion = "v1.37.0"
)

// APIDocs is the folder of the services' OpenAPI documents and of their
// changelog, relative to the repository root.
const APIDocs = "docs/api"

// HTTPChange is one change oasdiff found.
type HTTPChange struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	Level     int    `json:"level"`
	Operation string `json:"operation"`
	Path      string `json:"path"`
}

// Breaking reports whether oasdiff classes the change as breaking (ERR).
func (c HTTPChange) Breaking() bool { return c.Level >= 3 }

func (c HTTPChange) String() string {
	return fmt.Sprintf("%s %s: %s (%s)", c.Operation, c.Path, c.Text, c.ID)
}

// ServiceReport is one service's document at the base against now.
type ServiceReport struct {
	Service string
	// OldVersion and NewVersion are info.version ("" when the base has no
	// document: a new API).
	OldVersion, NewVersion string
	Changes                []HTTPChange
	// Logged: docs/api/CHANGELOG.md has a "### <NewVersion>" entry in the
	// service's section.
	Logged bool
}

// Breaking lists the breaking changes.
func (r ServiceReport) Breaking() []HTTPChange {
	var out []HTTPChange
	for _, c := range r.Changes {
		if c.Breaking() {
			out = append(out, c)
		}
	}
	return out
}

// Problem says why the change may not ship, "" when it may.
func (r ServiceReport) Problem() string {
	if r.OldVersion == "" {
		return ""
	}
	o, n := parse("v"+r.OldVersion), parse("v"+r.NewVersion)
	if less(n, o) {
		return fmt.Sprintf("%s: info.version went backwards: %s after %s", r.Service, r.NewVersion, r.OldVersion)
	}
	b := len(r.Breaking())
	if b == 0 {
		return ""
	}
	next := fmt.Sprintf("%d.0.0", o[0]+1)
	if n[0] <= o[0] {
		return fmt.Sprintf("%s: %d breaking change(s) of the HTTP API at version %s: a client of %s would break; bump the contract's APIVersion to %s with a \"### %s\" entry in the %s section of %s/CHANGELOG.md, or keep the old shape beside the new one",
			r.Service, b, r.NewVersion, r.OldVersion, next, next, r.Service, APIDocs)
	}
	if !r.Logged {
		return fmt.Sprintf("%s: version %s has no \"### %s\" entry in the %s section of %s/CHANGELOG.md listing its breaking changes", r.Service, r.NewVersion, r.NewVersion, r.Service, APIDocs)
	}
	return ""
}

// CompareHTTP compares every OpenAPI document of oldDocs (docs/api at the
// base) with newDocs (now) with the oasdiff binary. A document removed
// since the base is an error: a whole API gone breaks every client.
func CompareHTTP(oasdiff, oldDocs, newDocs string) ([]ServiceReport, error) {
	news, err := filepath.Glob(filepath.Join(newDocs, "*.openapi.json"))
	if err != nil {
		return nil, err
	}
	olds, _ := filepath.Glob(filepath.Join(oldDocs, "*.openapi.json"))
	for _, o := range olds {
		if _, err := os.Stat(filepath.Join(newDocs, filepath.Base(o))); err != nil {
			return nil, fmt.Errorf("%s was removed: every client of that API breaks", filepath.Base(o))
		}
	}
	changelog, _ := os.ReadFile(filepath.Join(newDocs, "CHANGELOG.md"))
	var out []ServiceReport
	for _, n := range news {
		name := strings.TrimSuffix(filepath.Base(n), ".openapi.json")
		r := ServiceReport{Service: name}
		if r.NewVersion, err = infoVersion(n); err != nil {
			return nil, err
		}
		r.Logged = logged(string(changelog), name, r.NewVersion)
		o := filepath.Join(oldDocs, filepath.Base(n))
		if _, err := os.Stat(o); err == nil {
			if r.OldVersion, err = infoVersion(o); err != nil {
				return nil, err
			}
			cmd := exec.Command(oasdiff, "changelog", o, n, "--format", "json")
			b, err := cmd.Output()
			if err != nil {
				msg := ""
				if ee, ok := err.(*exec.ExitError); ok {
					msg = string(ee.Stderr)
				}
				return nil, fmt.Errorf("%s: oasdiff: %v %s", name, err, msg)
			}
			if s := strings.TrimSpace(string(b)); s != "" && s != "null" {
				if err := json.Unmarshal(b, &r.Changes); err != nil {
					return nil, fmt.Errorf("%s: oasdiff's report: %w", name, err)
				}
			}
			sort.SliceStable(r.Changes, func(i, j int) bool { return r.Changes[i].Level > r.Changes[j].Level })
		}
		out = append(out, r)
	}
	return out, nil
}

func infoVersion(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var doc struct {
		Info struct {
			Version string `json:"version"`
		} `json:"info"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return doc.Info.Version, nil
}

// logged reports whether changelog's section "## <service>" has an entry
// "### <version>".
func logged(changelog, service, version string) bool {
	sections := regexp.MustCompile(`(?m)^## `).Split(changelog, -1)
	for _, s := range sections {
		head, body, _ := strings.Cut(s, "\n")
		if strings.TrimSpace(head) != service {
			continue
		}
		return regexp.MustCompile(`(?m)^### ` + regexp.QuoteMeta(version) + `\b`).MatchString(body)
	}
	return false
}

// InstallOASDiff builds the pinned oasdiff once into dir (bin/ of the
// repository) and returns its path.
func InstallOASDiff(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "oasdiff-"+OASDiffVersion)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp, err := os.MkdirTemp(dir, ".oasdiff-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "install", OASDiffPackage+"@"+OASDiffVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %v\n%s", OASDiffPackage, OASDiffVersion, err, out)
	}
	return path, os.Rename(filepath.Join(tmp, "oasdiff"), path)
}
