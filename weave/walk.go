package weave

import (
	"reflect"
	"sync"

	"modernc.org/cc/v4"
)

// walk calls visit for n and, if visit returns true, for every AST node
// below it, in source order. cc/v4 has no generic walker; its generated node
// types are plain structs whose exported pointer and interface fields are
// the children, so reflection finds them.
func walk(n cc.Node, visit func(cc.Node) bool) {
	if n == nil {
		return
	}
	v := reflect.ValueOf(n)
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return
	}
	if !visit(n) {
		return
	}
	walkValue(v, visit)
}

func walkValue(v reflect.Value, visit func(cc.Node) bool) {
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	s := v.Elem()
	if s.Kind() != reflect.Struct {
		return
	}
	for _, i := range childFields(s.Type()) {
		f := s.Field(i)
		switch f.Kind() {
		case reflect.Pointer:
			if f.IsNil() {
				continue
			}
		case reflect.Interface:
			if f.IsNil() {
				continue
			}
			f = f.Elem()
			if f.Kind() != reflect.Pointer || f.IsNil() {
				continue
			}
		}
		if c, ok := f.Interface().(cc.Node); ok {
			walk(c, visit)
		}
	}
}

var (
	fieldCache sync.Map // reflect.Type -> []int
	nodeType   = reflect.TypeOf((*cc.Node)(nil)).Elem()
)

// childFields lists the indices of t's exported fields that can hold AST
// nodes.
func childFields(t reflect.Type) []int {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]int)
	}
	var idx []int
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		switch f.Type.Kind() {
		case reflect.Pointer:
			if f.Type.Elem().Kind() == reflect.Struct && f.Type.Implements(nodeType) {
				idx = append(idx, i)
			}
		case reflect.Interface:
			if f.Type.Implements(nodeType) {
				idx = append(idx, i)
			}
		}
	}
	fieldCache.Store(t, idx)
	return idx
}
