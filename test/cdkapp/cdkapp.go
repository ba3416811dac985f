// Package cdkapp synthesizes the dynastack app inside a test process exactly
// as the CDK CLI would: same app code, same feature flags and context from
// cdk.json, so the tests see the template that deploys.
package cdkapp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/infra/assembly"
	"github.com/dynastack/dynastack/infra/config"
	"github.com/dynastack/dynastack/infra/stacks"
	"github.com/dynastack/dynastack/infra/synth"
)

// Assembly holds the synthesized templates by stage and stack id.
type Assembly struct {
	Dir string
	// Errors are the error annotations (policy findings) of every stack.
	Errors    []string
	Templates map[string]map[string]Template
	Stacks    map[string]map[string]Stack
	// Bootstrap holds the bootstrap stacks (stacks.NewBootstrap) by
	// stack id (their account), kept apart from the stages' service
	// stacks.
	Bootstrap map[string]Template
	// BootstrapStacks is what the manifest says about each bootstrap
	// stack, by the same id.
	BootstrapStacks map[string]Stack
}

// Stack is what the cloud assembly manifest says about a stack besides its
// template.
type Stack struct {
	StackName             string
	TerminationProtection bool
	// Environment is aws://<account>/<region> as the manifest says.
	Environment string
}

// Template is a CloudFormation template as parsed JSON.
type Template map[string]any

// Resources returns the resources of one CloudFormation type by logical id.
func (t Template) Resources(cfnType string) map[string]map[string]any {
	out := map[string]map[string]any{}
	res, _ := t["Resources"].(map[string]any)
	for id, r := range res {
		m, _ := r.(map[string]any)
		if m["Type"] == cfnType {
			out[id] = m
		}
	}
	return out
}

// Options change how the app is synthesized.
type Options struct {
	// Stages to build. Default: config.Stages().
	Stages []config.Stage
	// Bundle runs local bundling of Lambda assets. Default: false.
	Bundle bool
	// Checks adds every check the app's synth runs (synth.AddChecks: CDK's
	// CloudFormation validation, the Control Tower controls) and reads
	// their verdict with the annotations (synth.Failures) into Errors.
	// Default: false (annotations only).
	Checks bool
}

// Synth builds the app into a fresh directory and reads back every stack
// template.
func Synth(outdir string, opts Options) (*Assembly, error) {
	root, err := config.RepoRoot()
	if err != nil {
		return nil, err
	}
	ctx, err := cdktest.Context(filepath.Join(root, "cdk.json"), opts.Bundle)
	if err != nil {
		return nil, err
	}
	stages := opts.Stages
	if stages == nil {
		stages = config.Stages()
	}
	props := &awscdk.AppProps{Outdir: jsii.String(outdir), Context: &ctx}
	if opts.Checks {
		props.BuiltinCloudFormationValidation = jsii.Bool(false) // AddChecks adds it
	}
	app := awscdk.NewApp(props)
	if err := stacks.Build(app, stages); err != nil {
		return nil, err
	}
	if opts.Checks {
		if err := synth.AddChecks(app, root, nil); err != nil {
			return nil, err
		}
		errs := synth.Failures(app.Synth(nil))
		asm, err := Read(outdir)
		if asm != nil {
			asm.Errors = errs
		}
		return asm, err
	}
	errs := synth.AnnotationErrors(app.Synth(nil))
	asm, err := Read(outdir)
	if asm != nil {
		asm.Errors = errs
	}
	return asm, err
}

// Read loads the stack templates of a cloud assembly directory (cdk.out).
func Read(dir string) (*Assembly, error) {
	asm := &Assembly{Dir: dir, Templates: map[string]map[string]Template{}, Stacks: map[string]map[string]Stack{}, Bootstrap: map[string]Template{}, BootstrapStacks: map[string]Stack{}}
	err := readManifest(dir, asm)
	return asm, err
}

func readManifest(dir string, asm *Assembly) error {
	list, err := assembly.Stacks(dir)
	if err != nil {
		return err
	}
	for _, st := range list {
		if st.Stage == "" {
			return fmt.Errorf("stack %q is not inside a stage: every stack belongs to dev, stage or prod", st.ID)
		}
		raw, err := os.ReadFile(st.Template)
		if err != nil {
			return err
		}
		var t Template
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("%s: %w", st.Template, err)
		}
		if st.Stage == stacks.BootstrapStage {
			asm.Bootstrap[st.ID] = t
			asm.BootstrapStacks[st.ID] = Stack{StackName: st.StackName, TerminationProtection: st.TerminationProtection, Environment: st.Environment}
			continue
		}
		if asm.Templates[st.Stage] == nil {
			asm.Templates[st.Stage] = map[string]Template{}
			asm.Stacks[st.Stage] = map[string]Stack{}
		}
		asm.Templates[st.Stage][st.ID] = t
		asm.Stacks[st.Stage][st.ID] = Stack{StackName: st.StackName, TerminationProtection: st.TerminationProtection, Environment: st.Environment}
	}
	return nil
}

var assetHash = regexp.MustCompile(`\b[0-9a-f]{64}\b`)

// AssetHashPlaceholder replaces every asset hash in a normalized template.
const AssetHashPlaceholder = "ASSET_HASH"

// AssetPathPlaceholder replaces the local path of every asset.
const AssetPathPlaceholder = "ASSET_PATH"

// Normalize renders a template the way golden files store it: indented,
// keys sorted, asset hashes replaced, so that a rebuild of an unchanged
// Lambda does not show up in review.
func Normalize(t Template) ([]byte, error) {
	// The asset path is the bundling output in cdk.out but the absolute
	// source path when bundling is skipped: neither belongs in review.
	res, _ := t["Resources"].(map[string]any)
	for _, r := range res {
		if meta, ok := r.(map[string]any)["Metadata"].(map[string]any); ok {
			if _, ok := meta["aws:asset:path"]; ok {
				meta["aws:asset:path"] = AssetPathPlaceholder
			}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(t); err != nil {
		return nil, err
	}
	return assetHash.ReplaceAll(buf.Bytes(), []byte(AssetHashPlaceholder)), nil
}
