// Package assembly lists the stacks of a CDK cloud assembly (cdk.out),
// following the nested assemblies CDK writes for stages. The guard, the
// golden tests and the snapshot command all read assemblies through it.
package assembly

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Stack is one stack artifact.
type Stack struct {
	// Stage and ID come from the display name "<stage>/<id>"; a stack whose
	// display name has no stage takes the stage of its nested assembly.
	Stage, ID string
	// Template is the path of the template file.
	Template              string
	StackName             string
	TerminationProtection bool
	// Environment is where the stack deploys, aws://<account>/<region>
	// (unknown-account / unknown-region where the stack leaves it open).
	Environment string
}

type manifest struct {
	Artifacts map[string]struct {
		Type        string `json:"type"`
		DisplayName string `json:"displayName"`
		Environment string `json:"environment"`
		Properties  struct {
			TemplateFile          string `json:"templateFile"`
			DirectoryName         string `json:"directoryName"`
			DisplayName           string `json:"displayName"`
			StackName             string `json:"stackName"`
			TerminationProtection bool   `json:"terminationProtection"`
		} `json:"properties"`
	} `json:"artifacts"`
}

// Stacks lists the stacks of the assembly in dir in a stable order. Errors
// name the manifest and the problem.
func Stacks(dir string) ([]Stack, error) {
	var out []Stack
	return out, walk(dir, "", &out)
}

func walk(dir, stage string, out *[]Stack) error {
	path := filepath.Join(dir, "manifest.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: cannot read: %w", path, UnwrapPathError(err))
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%s: invalid JSON: %w", path, err)
	}
	for _, name := range slices.Sorted(maps.Keys(m.Artifacts)) {
		a := m.Artifacts[name]
		switch a.Type {
		case "cdk:cloud-assembly":
			if a.Properties.DirectoryName == "" {
				return fmt.Errorf("%s: artifact %s has no properties.directoryName", path, name)
			}
			nested := a.Properties.DisplayName
			if nested == "" {
				nested = strings.TrimPrefix(a.Properties.DirectoryName, "assembly-")
			}
			if err := walk(filepath.Join(dir, a.Properties.DirectoryName), nested, out); err != nil {
				return err
			}
		case "aws:cloudformation:stack":
			if a.Properties.TemplateFile == "" {
				return fmt.Errorf("%s: stack artifact %s has no properties.templateFile", path, name)
			}
			s := Stack{
				Template:              filepath.Join(dir, a.Properties.TemplateFile),
				StackName:             a.Properties.StackName,
				TerminationProtection: a.Properties.TerminationProtection,
				Environment:           a.Environment,
			}
			display := a.DisplayName
			if display == "" {
				display = name
			}
			if st, id, ok := strings.Cut(display, "/"); ok {
				s.Stage, s.ID = st, id
			} else {
				s.Stage, s.ID = stage, display
			}
			*out = append(*out, s)
		}
	}
	return nil
}

// UnwrapPathError drops the path from a *fs.PathError, which the messages
// name already.
func UnwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
