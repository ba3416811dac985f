package synth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// NagReportsContext is the context key that turns on cdk-nag's CSV
// compliance reports, one per pack and stack in the output folder
// (AwsSolutions-<stage>-<service>-<stage>-NagReport.csv): a line for every
// rule and resource, compliant, suppressed or not applicable. `make
// nag-report` sets it.
//
// Off by default: findings fail the synth as error annotations either way,
// nothing in the build reads the files, and writing them line by line took
// about 0.35 s of every synth.
const NagReportsContext = "dynastack:nagReports"

// NagReports tells whether the synth of scope writes cdk-nag's reports
// (NagReportsContext). stacks.ApplyPolicy asks it when it adds the packs.
func NagReports(scope constructs.IConstruct) bool {
	return fmt.Sprint(scope.Node().TryGetContext(jsii.String(NagReportsContext))) == "true"
}

// RemoveStaleNagReports deletes cdk-nag's reports of an earlier synth from
// the output folder of app when this synth does not write them (NagReports):
// no report may outlive the templates it describes.
func RemoveStaleNagReports(app awscdk.App) error {
	if NagReports(app) {
		return nil // cdk-nag rewrites them
	}
	old, err := filepath.Glob(filepath.Join(*app.Outdir(), "*-NagReport.csv"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
