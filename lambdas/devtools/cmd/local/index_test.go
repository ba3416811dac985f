package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/lambdas/devtools/testenv"
)

// The URLs of the ready line answer: GET / lists the services with their
// routes, GET /<service>/ one service's routes (its router's patterns under
// the runner's prefix).
func TestIndexPages(t *testing.T) {
	t.Parallel()
	dir := filepath.Dir(testenv.Template(t, "dev", "itsm"))
	r := start(t, dir)
	type service struct {
		Name   string   `json:"name"`
		URL    string   `json:"url"`
		Routes []string `json:"routes"`
	}
	var index struct {
		Services []service `json:"services"`
	}
	getJSON(t, r.base+"/", &index)
	var names []string
	for _, s := range index.Services {
		names = append(names, s.Name)
		if s.URL != r.base+"/"+s.Name+"/" || len(s.Routes) == 0 {
			t.Errorf("index entry %+v", s)
		}
		if !strings.Contains(r.ready, s.Name+"="+s.URL) {
			t.Errorf("ready line %q does not name %s", r.ready, s.URL)
		}
		var one service
		getJSON(t, s.URL, &one)
		if one.Name != s.Name || !slices.Equal(one.Routes, s.Routes) {
			t.Errorf("GET %s = %+v, want %+v", s.URL, one, s)
		}
	}
	if want := servedServices(t, dir); strings.Join(names, ",") != want {
		t.Errorf("index lists %v, want %s", names, want)
	}
	var itsm service
	getJSON(t, r.base+"/itsm/", &itsm)
	for _, route := range []string{"POST /itsm/tickets", "GET /itsm/tickets/{id}", "PATCH /itsm/tickets/{id}"} {
		if !slices.Contains(itsm.Routes, route) {
			t.Errorf("itsm routes %v lack %s", itsm.Routes, route)
		}
	}
	call(t, "GET", r.base+"/itsm/nothing", "", 404, nil)
}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %d %s %s", url, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, b)
	}
}
