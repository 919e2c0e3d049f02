package weave

import (
	"fmt"
	"strings"

	"modernc.org/cc/v4"

	"github.com/weave-profiler/weave/parse"
)

// typeFrom sets s's type from its size and count arguments (nil: none):
// what the site's own size expression says the block is, nothing
// borrowed from another site. With T the first sizeof(T) or sizeof expr
// in them:
//
//	sizeof(T)                    T          (TypeSize sizeof(T))
//	4 * sizeof(T), calloc(4, sizeof(T))  T[4]   (4 * sizeof(T))
//	n * sizeof(T), calloc(n, sizeof(T))  T[n]   (0: a run-time count)
//	sizeof(T) + 16               T + 16     (sizeof(T) + 16)
//	sizeof(T) + n                T + n      (0)
//
// and no type for a size without sizeof (malloc(16)) or of another shape.
func (s *Site) typeFrom(size, count cc.Node) {
	s.Type, s.TypeSize, s.SizeExpr = "", 0, ""
	var args []cc.Node
	for _, a := range []cc.Node{size, count} {
		if a != nil {
			args = append(args, a)
		}
	}
	var sz *cc.UnaryExpression
	for _, a := range args {
		if sz = firstSizeof(a); sz != nil {
			break
		}
	}
	if sz == nil {
		return
	}
	t := sizeofOperand(sz)
	if t == nil || t.Size() <= 0 {
		return
	}
	name, elem, elemExpr := parse.DisplayName(cType(t)), t.Size(), sizeExpr(t)
	scaled := func(k, extra int64) {
		s.TypeSize = k*elem + extra
		if elemExpr != "" {
			s.SizeExpr = elemExpr
			if k != 1 {
				s.SizeExpr = fmt.Sprintf("%d * %s", k, elemExpr)
			}
			if extra != 0 {
				s.SizeExpr += fmt.Sprintf(" + %d", extra)
			}
		}
	}
	// A product with sizeof(T) as one factor: T[k] for a constant k.
	var factors []cc.Node
	for _, a := range args {
		factors = append(factors, productFactors(a)...)
	}
	k, constant, isProduct := int64(1), true, false
	for _, f := range factors {
		if f == cc.Node(sz) {
			isProduct = true
			continue
		}
		if v, ok := intValue(f); ok {
			k *= v
		} else {
			constant = false
		}
	}
	switch {
	case isProduct && !constant:
		s.Type = name + "[n]"
	case isProduct && k == 1:
		s.Type = name
		scaled(1, 0)
	case isProduct && k > 1:
		s.Type = fmt.Sprintf("%s[%d]", name, k)
		scaled(k, 0)
	case !isProduct && len(args) == 1:
		// sizeof(T) + more: a header and what follows it.
		add, ok := strip(args[0]).(*cc.AdditiveExpression)
		if !ok || add.Case != cc.AdditiveExpressionAdd || strip(add.AdditiveExpression) != cc.Node(sz) {
			return
		}
		if v, ok := intValue(add.MultiplicativeExpression); ok {
			if v > 0 {
				s.Type = fmt.Sprintf("%s + %d", name, v)
				scaled(1, v)
			}
			return
		}
		s.Type = name + " + n"
	}
}

// firstSizeof returns the first sizeof(T) or sizeof expr in n, or nil.
func firstSizeof(n cc.Node) (r *cc.UnaryExpression) {
	walk(n, func(n cc.Node) bool {
		if r != nil {
			return false
		}
		if u, ok := n.(*cc.UnaryExpression); ok && (u.Case == cc.UnaryExpressionSizeofType || u.Case == cc.UnaryExpressionSizeofExpr) {
			r = u
			return false
		}
		return true
	})
	return r
}

// sizeofOperand returns the type sizeof u measures. cc/v4 gives an
// array expression (sizeof *p, p an int (*)[3]) its decayed type, so
// the array is taken back where sizeof's value says it is the operand.
func sizeofOperand(u *cc.UnaryExpression) cc.Type {
	if u.Case == cc.UnaryExpressionSizeofType {
		return u.TypeName.Type()
	}
	t := u.UnaryExpression.Type()
	if v, ok := intValue(u); ok && t != nil && t.Size() != v {
		if a := t.Undecay(); a != nil && a.Size() == v {
			return a
		}
	}
	return t
}

// strip returns n without enclosing parentheses and casts.
func strip(n cc.Node) cc.Node {
	for {
		switch x := n.(type) {
		case *cc.PrimaryExpression:
			if x.Case != cc.PrimaryExpressionExpr {
				return n
			}
			n = x.ExpressionList
		case *cc.ExpressionList:
			if x.ExpressionList != nil {
				return n
			}
			n = x.AssignmentExpression
		case *cc.CastExpression:
			if x.Case != cc.CastExpressionCast {
				return n
			}
			n = x.CastExpression
		default:
			return n
		}
	}
}

// productFactors returns the factors of n if it is a product, else n.
func productFactors(n cc.Node) []cc.Node {
	n = strip(n)
	if m, ok := n.(*cc.MultiplicativeExpression); ok && m.Case == cc.MultiplicativeExpressionMul {
		return append(productFactors(m.MultiplicativeExpression), productFactors(m.CastExpression)...)
	}
	return []cc.Node{n}
}

// intValue returns n's value if it is an integer constant expression.
func intValue(n cc.Node) (int64, bool) {
	e, ok := n.(cc.ExpressionNode)
	if !ok {
		return 0, false
	}
	switch v := e.Value().(type) {
	case cc.Int64Value:
		return int64(v), true
	case cc.UInt64Value:
		return int64(v), int64(v) >= 0
	}
	return 0, false
}

// cType spells t as a C programmer writes it in a cast: its typedef name
// if it has one, "struct entry", "char *[2]", "int (*)[3]".
func cType(t cc.Type) string { return cDecl(t, "") }

// cDecl spells t around the abstract declarator inner.
func cDecl(t cc.Type, inner string) string {
	if td := t.Typedef(); td != nil && td.Name() != "" {
		return cJoin(td.Name(), inner)
	}
	switch x := t.(type) {
	case *cc.PointerType:
		inner = "*" + inner
		if k := x.Elem().Kind(); (k == cc.Array || k == cc.Function) && x.Elem().Typedef() == nil {
			inner = "(" + inner + ")"
		}
		return cDecl(x.Elem(), inner)
	case *cc.ArrayType:
		if x.IsIncomplete() || x.IsVLA() || x.Len() < 0 {
			return cDecl(x.Elem(), inner+"[]")
		}
		return cDecl(x.Elem(), fmt.Sprintf("%s[%d]", inner, x.Len()))
	case *cc.FunctionType:
		var ps []string
		for _, p := range x.Parameters() {
			if p.Type() != nil {
				ps = append(ps, cType(p.Type()))
			}
		}
		if x.IsVariadic() {
			ps = append(ps, "...")
		}
		if len(ps) == 0 {
			ps = []string{"void"}
		}
		return cDecl(x.Result(), inner+"("+strings.Join(ps, ", ")+")")
	case *cc.StructType:
		return cJoin(tagged("struct", x.Tag()), inner)
	case *cc.UnionType:
		return cJoin(tagged("union", x.Tag()), inner)
	case *cc.EnumType:
		return cJoin(tagged("enum", x.Tag()), inner)
	}
	return cJoin(t.Kind().String(), inner)
}

// tagged spells a struct, union or enum type: "struct entry", or
// "struct {...}" for one without a tag.
func tagged(kind string, tag cc.Token) string {
	if s := tag.SrcStr(); s != "" {
		return kind + " " + s
	}
	return kind + " {...}"
}

// cJoin puts a base type and an abstract declarator together: "char *",
// "char[2]", "int (*)[3]".
func cJoin(base, inner string) string {
	if inner == "" || inner[0] == '[' {
		return base + inner
	}
	return base + " " + inner
}
