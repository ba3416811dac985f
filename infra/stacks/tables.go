package stacks

import (
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/dynastack/dynastack/infra/config"
)

// props returns the table props of one table in one stage.
func props(cfg config.Stage, service, id string) table.Props {
	return table.Props{Stage: cfg.Name, Overrides: cfg.Overrides(service, id)}
}
