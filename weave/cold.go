package weave

import (
	"bytes"

	"modernc.org/cc/v4"
)

// Cold calls. A call on a path the program marks as rarely taken — a call
// of a function declared noreturn or cold (an error report, abort, exit),
// with its arguments, or any call in the branch that __builtin_expect says
// is unlikely (Linux's and Lua's unlikely(), likely()) — does not make its
// caller framed at entry under --frames auto: the caller is framed at its
// calls (needCalls), its frame pushed around those calls alone, so the
// hot path of a function whose only allocations are in its error reports
// stays as the compiler sees it in the plain build. The chains are those
// of a frame at entry: the frame is on the pseudo-stack whenever the call
// runs. A call of a noreturn function runs at most once per activation,
// and an unlikely branch, by the program's own word, seldom.

// walkCalls walks body as walk does, in the same order, and calls visit
// for each node with whether it is on a cold path and whether it is in a
// loop (its body, condition or step; a for's first clause too; not in do
// ... while (0), a macro's block, which runs once). One walk does what
// took three (the cold calls, the calls in loops, then the calls: 60 ms
// of weaving sqlite3.c's 880,000 nodes, each a cache miss): a node that
// changes either for some of its children walks them itself, in walk's
// order of fields (TestWalkCallsOrder), and keeps walk from doing so.
func (w *weaver) walkCalls(body cc.Node, visit func(n cc.Node, cold, loop bool) bool) {
	c := &callWalk{w: w, visit: visit}
	c.node = c.enter
	walk(body, c.node)
}

// callWalk is walkCalls' state: the context of the node being visited.
type callWalk struct {
	w          *weaver
	visit      func(n cc.Node, cold, loop bool) bool
	node       func(cc.Node) bool // enter, once
	cold, loop bool
}

// enter visits n, and walks its children itself if their context differs.
func (c *callWalk) enter(n cc.Node) bool {
	call, _ := n.(*cc.PostfixExpression)
	if call != nil && call.Case == cc.PostfixExpressionCall && !c.cold && c.w.coldCallee(call.PostfixExpression) {
		// The call, with its arguments, is cold.
		if !c.visit(n, true, c.loop) {
			return false
		}
		c.children(true, c.loop, call.ArgumentExpressionList, call.ExpressionList, call.InitializerList, call.PostfixExpression, call.PrimaryExpression, call.TypeName)
		return false
	}
	if !c.visit(n, c.cold, c.loop) {
		return false
	}
	if !c.loop {
		if x, ok := n.(*cc.IterationStatement); ok && !(x.Case == cc.IterationStatementDo && isZero(x.ExpressionList)) {
			c.children(c.cold, true, x.Declaration, x.ExpressionList, x.ExpressionList2, x.ExpressionList3, x.Statement)
			return false
		}
	}
	if c.cold {
		return true
	}
	switch x := n.(type) {
	case *cc.SelectionStatement:
		if x.Case == cc.SelectionStatementIf || x.Case == cc.SelectionStatementIfElse {
			switch e := expectation(x.ExpressionList); {
			case e == 0:
				return c.coldChild(1, x.ExpressionList, x.Statement, x.Statement2)
			case e == 1 && x.Statement2 != nil:
				return c.coldChild(2, x.ExpressionList, x.Statement, x.Statement2)
			}
		}
	case *cc.LogicalOrExpression: // likely(c) || report()
		if x.Case == cc.LogicalOrExpressionLOr && expectation(x.LogicalOrExpression) == 1 {
			return c.coldChild(0, x.LogicalAndExpression, x.LogicalOrExpression)
		}
	case *cc.LogicalAndExpression: // unlikely(c) && report()
		if x.Case == cc.LogicalAndExpressionLAnd && expectation(x.LogicalAndExpression) == 0 {
			return c.coldChild(0, x.InclusiveOrExpression, x.LogicalAndExpression)
		}
	case *cc.ConditionalExpression: // unlikely(c) ? report() : x
		if x.Case == cc.ConditionalExpressionCond {
			if e := expectation(x.LogicalOrExpression); e == 0 || e == 1 {
				return c.coldChild(1-e, x.ConditionalExpression, x.ExpressionList, x.LogicalOrExpression)
			}
		}
	}
	return true
}

// coldChild walks a node's children, nodes, in walk's order, the one at
// index cold on a cold path, and returns false: enter walked them.
func (c *callWalk) coldChild(cold int, nodes ...cc.Node) bool {
	for i, n := range nodes {
		c.children(c.cold || i == cold, c.loop, n)
	}
	return false
}

// children walks nodes, in order, in the context cold, loop.
func (c *callWalk) children(cold, loop bool, nodes ...cc.Node) {
	oc, ol := c.cold, c.loop
	c.cold, c.loop = cold, loop
	for _, n := range nodes {
		walk(n, c.node)
	}
	c.cold, c.loop = oc, ol
}

// expectation returns the expected value of a condition written
// __builtin_expect(e, 0) or __builtin_expect(e, 1) (through parentheses),
// or -1.
func expectation(e cc.ExpressionNode) int {
	for {
		pe, ok := e.(*cc.PrimaryExpression)
		if !ok || pe.Case != cc.PrimaryExpressionExpr {
			break
		}
		el, ok := pe.ExpressionList.(*cc.ExpressionList)
		if ok && el.ExpressionList != nil {
			return -1 // a comma expression
		}
		if ok {
			e = el.AssignmentExpression
		} else {
			e = pe.ExpressionList
		}
	}
	call, ok := e.(*cc.PostfixExpression)
	if !ok || call.Case != cc.PostfixExpressionCall {
		return -1
	}
	if id := calleeIdent(call.PostfixExpression); id == nil || id.Token.SrcStr() != "__builtin_expect" {
		return -1
	}
	args := argList(call.ArgumentExpressionList)
	if len(args) != 2 {
		return -1
	}
	if v, ok := intConst(args[1]); ok && (v == 0 || v == 1) {
		return int(v)
	}
	return -1
}

// coldCallee reports whether the callee e names a function declared
// noreturn or cold (gcc's attributes, or C11's _Noreturn).
func (w *weaver) coldCallee(e cc.ExpressionNode) bool {
	id := calleeIdent(e)
	if id == nil {
		return false
	}
	d, _ := id.ResolvedTo().(*cc.Declarator)
	if d == nil || d.Type() == nil || d.Type().Kind() != cc.Function {
		return false
	}
	if v, ok := w.cold[d]; ok {
		return v
	}
	v := false
	if attrs := d.Type().Attributes(); attrs != nil {
		for _, a := range coldAttrs {
			if attrs.IsAttrSet(a) {
				v = true
			}
		}
	}
	if !v {
		v = hasColdWord(w.leadingText(d))
	}
	if w.cold == nil {
		w.cold = map[*cc.Declarator]bool{}
	}
	w.cold[d] = v
	return v
}

var coldAttrs = []string{"noreturn", "__noreturn__", "cold", "__cold__"}

// coldWord matches _Noreturn or one of coldAttrs as a word.
var coldWord = lazyRegexp(`\b(_Noreturn|noreturn|__noreturn__|cold|__cold__)\b`)

// hasColdWord reports whether the declaration specifiers lead (the text
// before a declarator) hold coldWord outside linemarkers (whose file
// names may hold anything).
func hasColdWord(lead []byte) bool {
	if !bytes.Contains(lead, []byte("oreturn")) && !bytes.Contains(lead, []byte("cold")) {
		return false // most leads: no regexp
	}
	for _, line := range bytes.Split(lead, []byte("\n")) {
		if t := bytes.TrimLeft(line, " \t"); (len(t) == 0 || t[0] != '#') && coldWord().Match(line) {
			return true
		}
	}
	return false
}

// isZero reports whether e is an integer constant expression of value 0.
func isZero(e cc.ExpressionNode) bool {
	v, ok := intConst(e)
	return ok && v == 0
}

// intConst returns the value of e if it is an integer constant expression
// that fits an int64.
func intConst(e cc.ExpressionNode) (int64, bool) {
	if e == nil {
		return 0, false
	}
	switch v := e.Value().(type) {
	case cc.Int64Value:
		return int64(v), true
	case cc.UInt64Value:
		return int64(v), v <= 1<<63-1
	}
	return 0, false
}
