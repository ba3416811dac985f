package stacks

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
)

// props returns the table props of one table in one stage.
func props(cfg config.Stage, service, id string) table.Props {
	return table.Props{Stage: cfg.Name, Overrides: cfg.Overrides(service, id), TableName: cfg.TableName(service, id)}
}

// checkTableKeys refuses a TableNames or Tables key that names no table of
// the stage: a misspelt key would otherwise leave the default silently in
// place (and a table meant to adopt a live one would create an empty one).
func checkTableKeys(stage awscdk.Stage, cfg config.Stage) error {
	var errs, known []string
	keys := slices.Collect(maps.Keys(cfg.TableNames))
	for k := range cfg.Tables {
		if _, dup := cfg.TableNames[k]; !dup {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	for _, st := range *stage.Node().Children() {
		stack, ok := st.(awscdk.Stack)
		if !ok {
			continue
		}
		for _, c := range *stack.Node().Children() {
			if _, ok := c.(awsdynamodb.TableV2); ok {
				known = append(known, config.TableKey(*stack.Node().Id(), *c.Node().Id()))
			}
		}
	}
	for _, k := range slices.Sorted(slices.Values(keys)) {
		if !slices.Contains(known, k) {
			errs = append(errs, fmt.Sprintf("stage %s: table key %q (TableNames or Tables in infra/config) names no table: use one of %s", cfg.Name, k, strings.Join(known, ", ")))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}
