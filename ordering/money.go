package ordering

import (
	"errors"
	"strconv"
	"strings"
)

// maxCents bounds prices so that sums of them cannot overflow an int64.
const maxCents = 1_000_000_000_00

var errPriceFormat = errors.New(`not a decimal with two fraction digits, e.g. "4.50"`)

// parseCents reads a price such as "4.50" into integer cents. Exactly two
// fraction digits are required so that a price is never ambiguous; money is
// never held in a float.
func parseCents(s string) (int64, error) {
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) != 2 || whole == "" || !allDigits(whole) || !allDigits(frac) {
		return 0, errPriceFormat
	}
	if len(whole) > 1 && whole[0] == '0' {
		return 0, errPriceFormat
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > maxCents/100 {
		return 0, errors.New("too large")
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	return w*100 + f, nil
}

// formatCents renders integer cents with two fraction digits.
func formatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return sign + strconv.FormatInt(c/100, 10) + "." + twoDigits(c%100)
}

func twoDigits(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
