package alarmeval

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// An expression of CloudWatch's metric math, as the templates' alarms use
// it: numbers, metric ids, + - * / (and unary minus), the comparisons
// == != < <= > >= (1 when true, 0 when false), parentheses, IF(cond, a,
// b) and FILL(x, value). Any other function (FILL's REPEAT and LINEAR,
// METRICS, SEARCH, ANOMALY_DETECTION_BAND, …) is refused when the alarm
// is read: evaluated wrong, an alarm would prove nothing.
type node interface {
	// eval is the node's value in one period; ok false is a missing
	// datapoint.
	eval(vals map[string]point) point
	// ids adds the metric ids the node reads.
	ids(into map[string]bool)
}

// point is one datapoint of a series, or a missing one.
type point struct {
	v  float64
	ok bool
}

type num float64

func (n num) eval(map[string]point) point { return point{float64(n), true} }
func (num) ids(map[string]bool)           {}

type ref string

func (r ref) eval(vals map[string]point) point { return vals[string(r)] }
func (r ref) ids(into map[string]bool)         { into[string(r)] = true }

type neg struct{ x node }

func (n neg) eval(vals map[string]point) point {
	p := n.x.eval(vals)
	return point{-p.v, p.ok}
}
func (n neg) ids(into map[string]bool) { n.x.ids(into) }

type binary struct {
	op   string
	l, r node
}

// eval: a datapoint missing on either side is missing in the result (CloudWatch aligns
// the series on timestamps; FILL is how an alarm says otherwise), and a
// division by zero yields no datapoint.
func (b binary) eval(vals map[string]point) point {
	l, r := b.l.eval(vals), b.r.eval(vals)
	if !l.ok || !r.ok {
		return point{}
	}
	truth := func(c bool) point {
		if c {
			return point{1, true}
		}
		return point{0, true}
	}
	switch b.op {
	case "+":
		return point{l.v + r.v, true}
	case "-":
		return point{l.v - r.v, true}
	case "*":
		return point{l.v * r.v, true}
	case "/":
		if r.v == 0 {
			return point{}
		}
		return point{l.v / r.v, true}
	case "==":
		return truth(l.v == r.v)
	case "!=":
		return truth(l.v != r.v)
	case "<":
		return truth(l.v < r.v)
	case "<=":
		return truth(l.v <= r.v)
	case ">":
		return truth(l.v > r.v)
	case ">=":
		return truth(l.v >= r.v)
	}
	panic("alarmeval: operator " + b.op)
}
func (b binary) ids(into map[string]bool) { b.l.ids(into); b.r.ids(into) }

// ifNode is IF(condition, trueValue, falseValue): a non-zero condition
// takes the first, zero the second; a missing condition is missing.
type ifNode struct{ cond, yes, no node }

func (n ifNode) eval(vals map[string]point) point {
	c := n.cond.eval(vals)
	if !c.ok {
		return point{}
	}
	if c.v != 0 {
		return n.yes.eval(vals)
	}
	return n.no.eval(vals)
}
func (n ifNode) ids(into map[string]bool) { n.cond.ids(into); n.yes.ids(into); n.no.ids(into) }

// fill is FILL(series, value): a missing datapoint becomes value.
type fill struct {
	x     node
	value float64
}

func (f fill) eval(vals map[string]point) point {
	if p := f.x.eval(vals); p.ok {
		return p
	}
	return point{f.value, true}
}
func (f fill) ids(into map[string]bool) { f.x.ids(into) }

// parseExpr parses a metric math expression.
func parseExpr(s string) (node, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, src: s}
	n, err := p.comparison()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("expression %q: unexpected %q", s, p.toks[p.pos])
	}
	return n, nil
}

func lex(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := rune(s[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case strings.ContainsRune("+-*/(),", c):
			toks = append(toks, string(c))
			i++
		case strings.ContainsRune("<>=!", c):
			if i+1 < len(s) && s[i+1] == '=' {
				toks = append(toks, s[i:i+2])
				i += 2
				continue
			}
			if c == '=' || c == '!' {
				return nil, fmt.Errorf("expression %q: %q at %d (comparisons are == != < <= > >=)", s, c, i)
			}
			toks = append(toks, string(c))
			i++
		case c >= '0' && c <= '9' || c == '.':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'e' || s[j] == 'E') {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		case c == '_' || unicode.IsLetter(c):
			j := i
			for j < len(s) && (s[j] == '_' || unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j]))) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		default:
			return nil, fmt.Errorf("expression %q: character %q at %d", s, c, i)
		}
	}
	return toks, nil
}

type parser struct {
	toks []string
	pos  int
	src  string
}

func (p *parser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *parser) expect(tok string) error {
	if p.peek() != tok {
		return fmt.Errorf("expression %q: expected %q, found %q", p.src, tok, p.peek())
	}
	p.pos++
	return nil
}

// comparison is the lowest precedence: additive (op additive)?.
func (p *parser) comparison() (node, error) {
	l, err := p.additive()
	if err != nil {
		return nil, err
	}
	switch op := p.peek(); op {
	case "==", "!=", "<", "<=", ">", ">=":
		p.pos++
		r, err := p.additive()
		if err != nil {
			return nil, err
		}
		return binary{op, l, r}, nil
	}
	return l, nil
}

func (p *parser) additive() (node, error) {
	l, err := p.term()
	if err != nil {
		return nil, err
	}
	for op := p.peek(); op == "+" || op == "-"; op = p.peek() {
		p.pos++
		r, err := p.term()
		if err != nil {
			return nil, err
		}
		l = binary{op, l, r}
	}
	return l, nil
}

func (p *parser) term() (node, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for op := p.peek(); op == "*" || op == "/"; op = p.peek() {
		p.pos++
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = binary{op, l, r}
	}
	return l, nil
}

func (p *parser) unary() (node, error) {
	if p.peek() == "-" {
		p.pos++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return neg{x}, nil
	}
	return p.primary()
}

func (p *parser) primary() (node, error) {
	tok := p.peek()
	switch {
	case tok == "":
		return nil, fmt.Errorf("expression %q: ends early", p.src)
	case tok == "(":
		p.pos++
		n, err := p.comparison()
		if err != nil {
			return nil, err
		}
		return n, p.expect(")")
	case tok[0] >= '0' && tok[0] <= '9' || tok[0] == '.':
		v, err := strconv.ParseFloat(tok, 64)
		if err != nil {
			return nil, fmt.Errorf("expression %q: number %q", p.src, tok)
		}
		p.pos++
		return num(v), nil
	case tok[0] == '_' || unicode.IsLetter(rune(tok[0])):
		p.pos++
		if p.peek() != "(" {
			return ref(tok), nil
		}
		p.pos++
		args, err := p.args()
		if err != nil {
			return nil, err
		}
		return call(p.src, tok, args)
	}
	return nil, fmt.Errorf("expression %q: unexpected %q", p.src, tok)
}

func (p *parser) args() ([]node, error) {
	var args []node
	if p.peek() == ")" {
		p.pos++
		return nil, nil
	}
	for {
		a, err := p.comparison()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
		if p.peek() == "," {
			p.pos++
			continue
		}
		return args, p.expect(")")
	}
}

// call builds a function node; only the functions the evaluator knows.
func call(src, name string, args []node) (node, error) {
	switch name {
	case "IF":
		if len(args) != 3 {
			return nil, fmt.Errorf("expression %q: IF takes 3 arguments (condition, true value, false value), got %d", src, len(args))
		}
		return ifNode{args[0], args[1], args[2]}, nil
	case "FILL":
		if len(args) != 2 {
			return nil, fmt.Errorf("expression %q: FILL takes 2 arguments, got %d", src, len(args))
		}
		v, ok := args[1].(num)
		if !ok {
			// FILL(x, REPEAT), FILL(x, LINEAR) or a series as the value.
			return nil, fmt.Errorf("expression %q: FILL's value must be a number here (REPEAT, LINEAR and series are not evaluated locally)", src)
		}
		return fill{args[0], float64(v)}, nil
	}
	return nil, fmt.Errorf("expression %q: function %s is not evaluated locally (IF and FILL are)", src, name)
}
