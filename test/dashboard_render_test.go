package test

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/catalog"
	"github.com/stretchr/testify/require"
)

// Pixels per grid unit of a dashboard (CloudWatch's grid is 24 wide).
const (
	unitWidth  = 50
	unitHeight = 28
)

// TestDashboardRendering draws each service's dev dashboard as SVG from
// the dashboard JSON of its golden template (docs/dashboards/<service>-dev.svg,
// linked from the README): widget positions, sizes, titles and each
// graph's metrics, as CloudWatch lays them out. A dashboard change that
// is not drawn again fails; `make snapshots` (-update) redraws.
//
// The stage overview (dynastack-dev, in the first service's stack) is
// drawn the same way, as docs/dashboards/overview-dev.svg.
func TestDashboardRendering(t *testing.T) {
	type drawing struct{ stack, dashboard, file string }
	var drawings []drawing
	for _, s := range catalog.Services() {
		drawings = append(drawings, drawing{s.Name, s.Name + "-dev", s.Name + "-dev.svg"})
	}
	drawings = append(drawings, drawing{catalog.Services()[0].Name, "dynastack-dev", "overview-dev.svg"})
	for _, d := range drawings {
		raw, err := os.ReadFile(filepath.Join("snapshots", "dev", d.stack+".template.json"))
		require.NoError(t, err, "%s: golden template", d.stack)
		svg, err := renderDashboard(raw, d.dashboard)
		require.NoError(t, err, "%s: dashboard %s", d.stack, d.dashboard)
		path := filepath.Join("..", "docs", "dashboards", d.file)
		if *update {
			require.NoError(t, os.WriteFile(path, []byte(svg), 0o644))
			continue
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "no rendering %s: run `make snapshots`", path)
		require.Equal(t, string(want), svg, "%s is not the rendering of the dev dashboard %s: run `make snapshots` and commit it", path, d.dashboard)
	}
}

// renderDashboard draws the AWS::CloudWatch::Dashboard of a template
// named dashboard.
func renderDashboard(template []byte, dashboard string) (string, error) {
	var tmpl struct {
		Resources map[string]struct {
			Type       string
			Properties struct {
				DashboardName string
				// A body with tokens is an Fn::Join, one without a string
				// (the overview names no resource).
				DashboardBody json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(template, &tmpl); err != nil {
		return "", err
	}
	var body, name string
	for _, r := range tmpl.Resources {
		if r.Type != "AWS::CloudWatch::Dashboard" || r.Properties.DashboardName != dashboard {
			continue
		}
		var plain string
		if json.Unmarshal(r.Properties.DashboardBody, &plain) == nil {
			body, name = plain, r.Properties.DashboardName
			continue
		}
		var joined struct {
			Join []any `json:"Fn::Join"`
		}
		if err := json.Unmarshal(r.Properties.DashboardBody, &joined); err != nil || len(joined.Join) != 2 {
			return "", fmt.Errorf("dashboard body: want a string or Fn::Join")
		}
		parts, _ := joined.Join[1].([]any)
		var b strings.Builder
		for _, p := range parts {
			if s, ok := p.(string); ok {
				b.WriteString(s)
			} else {
				b.WriteString("…") // a token: resolved at deploy
			}
		}
		body, name = b.String(), r.Properties.DashboardName
	}
	if body == "" {
		return "", fmt.Errorf("no dashboard %s", dashboard)
	}
	var d struct {
		Widgets []struct {
			X, Y, Width, Height int
			Properties          struct {
				Title   string
				Metrics [][]any
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		return "", fmt.Errorf("dashboard body: %w", err)
	}
	bottom := 0
	for _, w := range d.Widgets {
		bottom = max(bottom, w.Y+w.Height)
	}
	var out strings.Builder
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">`+"\n", 24*unitWidth, bottom*unitHeight+30)
	fmt.Fprintf(&out, `<rect width="100%%" height="100%%" fill="#f4f5f7"/><text x="8" y="20" font-size="16" font-weight="bold">%s (dev)</text>`+"\n", html.EscapeString(name))
	for _, w := range d.Widgets {
		x, y := w.X*unitWidth+4, w.Y*unitHeight+34
		fmt.Fprintf(&out, `<g><rect x="%d" y="%d" width="%d" height="%d" rx="4" fill="#fff" stroke="#c6c9cf"/>`, x, y, w.Width*unitWidth-8, w.Height*unitHeight-8)
		fmt.Fprintf(&out, `<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>`, x+8, y+18, html.EscapeString(w.Properties.Title))
		for i, m := range w.Properties.Metrics {
			if i >= (w.Height*unitHeight-40)/14 {
				break
			}
			fmt.Fprintf(&out, `<text x="%d" y="%d" font-size="11" fill="#444">%s</text>`, x+12, y+36+i*14, html.EscapeString(metricLabel(m)))
		}
		out.WriteString("</g>\n")
	}
	out.WriteString("</svg>\n")
	return out.String(), nil
}

// metricLabel names a dashboard metric line: its label, else namespace,
// name and dimension values.
func metricLabel(m []any) string {
	var parts []string
	for _, x := range m {
		switch x := x.(type) {
		case string:
			if x != "." && x != "…" {
				parts = append(parts, x)
			}
		case map[string]any:
			if l, ok := x["label"].(string); ok {
				if x["yAxis"] == "right" {
					l += " (right axis)"
				}
				return "— " + l
			}
		}
	}
	return "— " + strings.Join(parts, " ")
}
