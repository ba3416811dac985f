// Package apicheck compares the exported API of the constructs module in two
// source trees with golang.org/x/exp/cmd/apidiff (pinned) and holds an
// incompatible change against the version its CHANGELOG.md declares:
// other teams pin constructs/vX.Y.Z tags, so a breaking change must come
// with a breaking version bump (make apidiff; constructs/CHANGELOG.md).
package apicheck

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// APIDiff is the pinned apidiff: the newest golang.org/x/exp version the
// Go 1.26 toolchain here was checked against (x/exp has no semver tags).
const (
	APIDiffPackage = "golang.org/x/exp/cmd/apidiff"
	APIDiffVersion = "v0.0.0-20261113113407-e3970619a1a4"
)

// ModulePath is the module whose API is compared.
const ModulePath = "github.com/dynastack/dynastack/constructs"

// Report is the outcome of a comparison.
type Report struct {
	Incompatible, Compatible []string
	// OldVersion and NewVersion are the top versions of each tree's
	// CHANGELOG.md ("" when the old tree has none: a first release).
	OldVersion, NewVersion string
}

// Problem says why the change may not ship, "" when it may.
func (r Report) Problem() string {
	if r.NewVersion == "" {
		return "CHANGELOG.md declares no version: add a \"## vX.Y.Z\" section for this change"
	}
	if r.OldVersion == "" {
		return ""
	}
	o, n := parse(r.OldVersion), parse(r.NewVersion)
	if less(n, o) {
		return fmt.Sprintf("CHANGELOG.md's version went backwards: %s after %s", r.NewVersion, r.OldVersion)
	}
	if len(r.Incompatible) == 0 {
		return ""
	}
	next := fmt.Sprintf("v%d.0.0", o[0]+1)
	if o[0] == 0 {
		next = fmt.Sprintf("v0.%d.0", o[1]+1)
	}
	breaking := n[0] > o[0] || (o[0] == 0 && n[1] > o[1])
	if !breaking {
		return fmt.Sprintf("%d incompatible API change(s) with CHANGELOG.md at %s (was %s): a team pinning %s would break on upgrade; bump to %s with a \"### Breaking\" list of them, or keep the old API beside the new one", len(r.Incompatible), r.NewVersion, r.OldVersion, r.OldVersion, next)
	}
	return ""
}

// Compare writes the export data of the module in oldDir and newDir with
// the apidiff binary and compares them.
func Compare(apidiff, oldDir, newDir string) (Report, error) {
	tmp, err := os.MkdirTemp("", "apicheck-")
	if err != nil {
		return Report{}, err
	}
	defer os.RemoveAll(tmp)
	var files [2]string
	for i, dir := range []string{oldDir, newDir} {
		files[i] = filepath.Join(tmp, fmt.Sprintf("%d.api", i))
		if _, err := run(dir, apidiff, "-m", "-w", files[i], ModulePath); err != nil {
			return Report{}, fmt.Errorf("export data of %s: %w", dir, err)
		}
	}
	out, err := run(tmp, apidiff, "-m", files[0], files[1])
	if err != nil {
		return Report{}, err
	}
	r := parseReport(out)
	if r.OldVersion, err = Version(oldDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	if r.NewVersion, err = Version(newDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	return r, nil
}

func run(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	// The module is compared alone, as another team's build sees it.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v: %s", filepath.Base(name), strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// parseReport reads apidiff's text report ("Incompatible changes:" and
// "Compatible changes:" sections of "- " lines).
func parseReport(out string) Report {
	var r Report
	var section *[]string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Incompatible changes:"):
			section = &r.Incompatible
		case strings.HasPrefix(line, "Compatible changes:"):
			section = &r.Compatible
		case strings.HasPrefix(line, "- ") && section != nil:
			*section = append(*section, strings.TrimPrefix(line, "- "))
		}
	}
	return r
}

var versionHeading = regexp.MustCompile(`(?m)^## \[?(v(\d+)\.(\d+)\.(\d+))\]?`)

// Version is the top version of dir's CHANGELOG.md: the version the tree's
// API is released as.
func Version(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "CHANGELOG.md"))
	if err != nil {
		return "", err
	}
	return VersionOf(b), nil
}

// VersionOf is the top version of a CHANGELOG.md's text, "" when it
// declares none.
func VersionOf(changelog []byte) string {
	m := versionHeading.FindSubmatch(changelog)
	if m == nil {
		return ""
	}
	return string(m[1])
}

func parse(v string) [3]int {
	var out [3]int
	for i, p := range strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3) {
		out[i], _ = strconv.Atoi(p)
	}
	return out
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// Install builds the pinned apidiff once into dir (bin/ of the repository)
// and returns its path; the module comes from the module cache, offline
// after the first download.
func Install(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "apidiff-"+APIDiffVersion)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	tmp, err := os.MkdirTemp(dir, ".apidiff-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "install", APIDiffPackage+"@"+APIDiffVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %v\n%s", APIDiffPackage, APIDiffVersion, err, out)
	}
	return path, os.Rename(filepath.Join(tmp, "apidiff"), path)
}
