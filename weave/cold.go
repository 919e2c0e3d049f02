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

// coldCalls returns the calls of body that run on a cold path.
func (w *weaver) coldCalls(body cc.Node) map[*cc.PostfixExpression]bool {
	cold := map[*cc.PostfixExpression]bool{}
	markAll := func(n cc.Node) { addCalls(cold, n) }
	walk(body, func(n cc.Node) bool {
		switch x := n.(type) {
		case *cc.SelectionStatement:
			if x.Case != cc.SelectionStatementIf && x.Case != cc.SelectionStatementIfElse {
				break
			}
			switch expectation(x.ExpressionList) {
			case 0:
				markAll(x.Statement)
			case 1:
				if x.Statement2 != nil {
					markAll(x.Statement2)
				}
			}
		case *cc.LogicalOrExpression: // likely(c) || report()
			if x.Case == cc.LogicalOrExpressionLOr && expectation(x.LogicalOrExpression) == 1 {
				markAll(x.LogicalAndExpression)
			}
		case *cc.LogicalAndExpression: // unlikely(c) && report()
			if x.Case == cc.LogicalAndExpressionLAnd && expectation(x.LogicalAndExpression) == 0 {
				markAll(x.InclusiveOrExpression)
			}
		case *cc.ConditionalExpression:
			if x.Case != cc.ConditionalExpressionCond {
				break
			}
			switch expectation(x.LogicalOrExpression) {
			case 0:
				markAll(x.ExpressionList)
			case 1:
				markAll(x.ConditionalExpression)
			}
		case *cc.PostfixExpression:
			if x.Case == cc.PostfixExpressionCall && w.coldCallee(x.PostfixExpression) {
				markAll(x)
				return false
			}
		}
		return true
	})
	return cold
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

// loopCalls returns the calls of body inside a loop (its body, condition
// or step; a for's first clause too), but for do ... while (0), a
// macro's block, which runs once.
func loopCalls(body cc.Node) map[*cc.PostfixExpression]bool {
	in := map[*cc.PostfixExpression]bool{}
	walk(body, func(n cc.Node) bool {
		x, ok := n.(*cc.IterationStatement)
		if !ok || x.Case == cc.IterationStatementDo && isZero(x.ExpressionList) {
			return true
		}
		addCalls(in, x)
		return false
	})
	return in
}

// addCalls adds the calls in n to set.
func addCalls(set map[*cc.PostfixExpression]bool, n cc.Node) {
	if n == nil {
		return
	}
	walk(n, func(m cc.Node) bool {
		if x, ok := m.(*cc.PostfixExpression); ok && x.Case == cc.PostfixExpressionCall {
			set[x] = true
		}
		return true
	})
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
