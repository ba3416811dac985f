// Package bearer is how a dev tool takes a bearer token (make smoke's and
// make load's Stak end-user token): from a file, from the environment or
// from standard input, never from its command line. A process's argv is
// readable by every user of the machine (ps, /proc/<pid>/cmdline), lands
// in shell history and, given to make as a variable, in MAKEFLAGS, which
// every child inherits; the environment of a process is readable by its
// owner only, and a file by whom its mode allows.
//
// A Source names the token's variables and flags:
//
//	STAK_TOKEN=<token>          (exported, not a make command-line variable)
//	STAK_TOKEN_FILE=<path>      -stak-token-file <path>   (a file only its owner can read)
//	STAK_TOKEN_FILE=-           -stak-token-stdin         (standard input)
//
// and -stak-token, the flag that once took the token itself, is refused
// with those ways named, before the flag package could print its value.
package bearer

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
)

// MaxLen bounds a token read from a file or standard input: a JWT of a
// real identity provider is a few KiB.
const MaxLen = 64 << 10

// Source is one bearer token a tool takes.
type Source struct {
	// What the token is, for messages ("Stak token").
	What string
	// Env is the variable holding the token itself (STAK_TOKEN).
	Env string
	// Flag is the refused flag name (stak-token); the tool's flags are
	// -<Flag>-file and -<Flag>-stdin, and <Env>_FILE is the file's
	// variable.
	Flag string
}

// FileEnv is the variable naming the token's file (STAK_TOKEN_FILE).
func (s Source) FileEnv() string { return s.Env + "_FILE" }

// Ways names the safe ways to pass the token, for usage lines and
// refusals.
func (s Source) Ways() string {
	return fmt.Sprintf("%s=<path> (or -%s-file <path>) naming a file only you can read (chmod 600), %s=- (or -%s-stdin) to read it from standard input, or %s exported in the environment",
		s.FileEnv(), s.Flag, s.FileEnv(), s.Flag, s.Env)
}

// CheckArgs refuses args that carry -<Flag> (a token on the command line)
// in any spelling: -f, --f, -f=v. Call it before parsing, so that no flag
// error prints the value; the error never holds it either.
func (s Source) CheckArgs(args []string) error {
	for _, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if strings.HasPrefix(a, "-") && name == s.Flag {
			return fmt.Errorf("-%s: the %s is not taken on the command line, where every user of the machine can read it (ps, /proc) and the shell keeps it in its history: give it as %s", s.Flag, s.What, s.Ways())
		}
	}
	return nil
}

// Flags are the token's flags of one flag set.
type Flags struct {
	src   Source
	file  *string
	stdin *bool
}

// Flags adds -<Flag>-file and -<Flag>-stdin to fs.
func (s Source) Flags(fs *flag.FlagSet) *Flags {
	return &Flags{src: s,
		file:  fs.String(s.Flag+"-file", "", fmt.Sprintf("a file holding the %s, readable by its owner only (default $%s; - is standard input)", s.What, s.FileEnv())),
		stdin: fs.Bool(s.Flag+"-stdin", false, fmt.Sprintf("read the %s from standard input", s.What)),
	}
}

// Read returns the token from the one place given: -<Flag>-stdin (or a
// file "-"), -<Flag>-file (default $<Env>_FILE), or $<Env>; "" when none
// is. Two places given is an error (which would win is a guess), as are
// a file others can read, an empty token and one with whitespace or
// control characters inside. No error holds the token.
func (f *Flags) Read(getenv func(string) string, stdin io.Reader) (string, error) {
	s := f.src
	var given []string
	file := *f.file
	if file != "" {
		given = append(given, "-"+s.Flag+"-file")
	} else if file = getenv(s.FileEnv()); file != "" {
		given = append(given, s.FileEnv())
	}
	if *f.stdin {
		given = append(given, "-"+s.Flag+"-stdin")
		file = "-"
	}
	env := getenv(s.Env)
	if env != "" {
		given = append(given, s.Env)
	}
	switch {
	case len(given) > 1:
		return "", fmt.Errorf("the %s is given %d times (%s): give it once", s.What, len(given), strings.Join(given, ", "))
	case len(given) == 0:
		return "", nil
	case env != "":
		return check(s, env, "$"+s.Env)
	case file == "-":
		b, err := io.ReadAll(io.LimitReader(stdin, MaxLen+1))
		if err != nil {
			return "", fmt.Errorf("the %s from standard input: %w", s.What, err)
		}
		return check(s, string(b), "standard input")
	}
	fh, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("the %s file: %w", s.What, err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return "", fmt.Errorf("the %s file: %w", s.What, err)
	}
	// A pipe (<(…), /dev/stdin) or a terminal has no readers but its
	// own; a regular file may.
	if st.Mode().IsRegular() && st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("the %s file %s can be read by other users (mode %04o): chmod 600 %s", s.What, file, st.Mode().Perm(), file)
	}
	b, err := io.ReadAll(io.LimitReader(fh, MaxLen+1))
	if err != nil {
		return "", fmt.Errorf("the %s file: %w", s.What, err)
	}
	return check(s, string(b), file)
}

func check(s Source, tok, from string) (string, error) {
	if len(tok) > MaxLen {
		return "", fmt.Errorf("the %s from %s is longer than %d bytes: is it the token?", s.What, from, MaxLen)
	}
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return "", fmt.Errorf("the %s from %s is empty", s.What, from)
	}
	if strings.IndexFunc(tok, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return "", errors.New("the " + s.What + " from " + from + " holds whitespace or control characters inside: give the token alone")
	}
	return tok, nil
}

// Stak is Stak's end-user token, as make smoke and make load take it.
var Stak = Source{What: "Stak token", Env: "STAK_TOKEN", Flag: "stak-token"}
