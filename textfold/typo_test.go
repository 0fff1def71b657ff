package textfold

import "testing"

func TestTypoBudget(t *testing.T) {
	for n, want := range map[int]int{0: 0, 3: 0, 4: 1, 7: 1, 8: 2, 30: 2} {
		if got := TypoBudget(n); got != want {
			t.Errorf("TypoBudget(%d) = %d, want %d", n, got, want)
		}
	}
}
