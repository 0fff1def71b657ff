package httpapi

import (
	"regexp"
	"strings"

	"companydocs"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
)

// routeUpload is the one route that takes a large body: the delivered PDF.
const routeUpload = "/operator/orders/:id/document"

// MaxUploadSize bounds the body of the upload route (20 MiB, the
// ordering service's MaxDocumentSize); every other route keeps
// Config.BodyLimit.
const MaxUploadSize = 20 << 20

var uploadPath = regexp.MustCompile(`^/api/v1/operator/orders/[^/]+/document/?$`)

// DocumentURL is the download_url of an order's document.
func DocumentURL(orderID string) string {
	return "/api/v1/documents/orders/" + orderID + "/document"
}

// noteRequest is the optional body of cancel, and the body of fail.
type noteRequest struct {
	Note   string `json:"note"`
	Reason string `json:"reason"`
}

// readNote reads an optional JSON body with "note" (or, for fail, the
// required "reason").
func readNote(c *fiber.Ctx, field string) (string, error) {
	if len(strings.TrimSpace(string(c.Body()))) == 0 {
		return "", nil
	}
	var req noteRequest
	if err := decodeJSON(c, &req, `"`+field+`"`); err != nil {
		return "", err
	}
	if field == "reason" {
		return req.Reason, nil
	}
	return req.Note, nil
}

// handleCancelOrder cancels the client's own order (before REQUESTED).
func (h orderHandlers) handleCancelOrder(c *fiber.Ctx) error {
	s := h.s
	note, err := readNote(c, "note")
	if err != nil {
		return err
	}
	o, err := s.Orders.CancelOrder(c.UserContext(), currentSession(c).account, utils.CopyString(c.Params("id")), note)
	if err != nil {
		return err
	}
	return c.JSON(companydocs.OrderIn(sayingIn(c), o))
}

// handleDownload streams the delivered PDF to the order's owner, as it
// is read: from the file, or chunk by chunk from a shared store. A
// download holds a slot of the account's and of the node's bound until
// the HTTP server closes the stream: after the last byte, when the
// client went away, or when the write timeout cut a slow reader off.
func (h orderHandlers) handleDownload(c *fiber.Ctx) error {
	s := h.s
	account := currentSession(c).account
	release, err := s.downloads.acquire(c, account)
	if err != nil {
		return err
	}
	streaming := false
	defer func() {
		if !streaming { // an error, a 304 or a panic: the slot is free again
			release()
		}
	}()
	o, r, err := s.Orders.Document(c.UserContext(), account, utils.CopyString(c.Params("id")))
	if err != nil {
		return err
	}
	etag := `"` + o.Document.SHA256 + `"`
	c.Set(fiber.HeaderETag, etag)
	if c.Get(fiber.HeaderIfNoneMatch) == etag {
		r.Close()
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, "application/pdf")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+DocumentFileName(o)+`"`)
	streaming = true
	return c.SendStream(releasingReader{r, release}, int(o.Document.Size)) // fasthttp closes it
}

// DocumentFileName is "<court>_<register number>_<document type>_<date
// of delivery>.pdf" in ASCII letters, digits, '-' and '.'.
func DocumentFileName(o *companydocs.Order) string {
	date := o.CreatedAt
	if n := len(o.History); n > 0 {
		date = o.History[n-1].At
	}
	parts := []string{o.Company.Court, o.Company.RegistryNumber, string(o.DocumentType), date.Format("2006-01-02")}
	for i, p := range parts {
		parts[i] = asciiSafe(p)
	}
	return strings.Join(parts, "_") + ".pdf"
}

var umlauts = strings.NewReplacer("ä", "ae", "ö", "oe", "ü", "ue", "Ä", "Ae", "Ö", "Oe", "Ü", "Ue", "ß", "ss")

func asciiSafe(s string) string {
	var b strings.Builder
	for _, r := range umlauts.Replace(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// operatorOrder is an order as operators see it: with its account.
type operatorOrder struct {
	*companydocs.Order
	AccountName string `json:"account"`
	// Step is the operator's next step, in place of the client's.
	Step companydocs.OperatorStep `json:"operator_step"`
}

// operatorOrderIn is o as an operator sees it, said in lang.
func operatorOrderIn(lang string, o *companydocs.Order) operatorOrder {
	return operatorOrder{Order: companydocs.OrderIn(lang, o), AccountName: o.Account, Step: companydocs.OperatorStepIn(lang, o)}
}

func withAccounts(lang string, orders []*companydocs.Order) []operatorOrder {
	out := make([]operatorOrder, len(orders))
	for i, o := range orders {
		out[i] = operatorOrderIn(lang, o)
	}
	return out
}

// handleOperatorOrders lists every account's orders, oldest first, with
// ?status=, ?limit= and ?cursor=.
func (h orderHandlers) handleOperatorOrders(c *fiber.Ctx) error {
	s := h.s
	limit, err := limitParam(c.Query("limit"))
	if err != nil {
		return err
	}
	orders, next, err := s.Orders.OperatorOrders(c.UserContext(), currentSession(c).account,
		utils.CopyString(c.Query("status")), utils.CopyString(c.Query("cursor")), limit)
	if err != nil {
		return err
	}
	resp := fiber.Map{"orders": withAccounts(sayingIn(c), orders), "next_cursor": nil}
	if next != "" {
		resp["next_cursor"] = next
	}
	return c.JSON(resp)
}

func (h orderHandlers) handleOperatorOrder(c *fiber.Ctx) error {
	s := h.s
	o, err := s.Orders.OperatorOrder(c.UserContext(), currentSession(c).account, utils.CopyString(c.Params("id")))
	if err != nil {
		return err
	}
	return c.JSON(operatorOrderIn(sayingIn(c), o))
}

// handleOperatorAction runs pay, request, fail ({"reason"} required) or
// cancel ({"note"} optional).
func (h orderHandlers) handleOperatorAction(action string) fiber.Handler {
	s := h.s
	field := "note"
	if action == "fail" {
		field = "reason"
	}
	return func(c *fiber.Ctx) error {
		note, err := readNote(c, field)
		if err != nil {
			return err
		}
		o, err := s.Orders.OperatorAction(c.UserContext(), currentSession(c).account, utils.CopyString(c.Params("id")), action, note)
		if err != nil {
			return err
		}
		return c.JSON(operatorOrderIn(sayingIn(c), o))
	}
}

// handleDeliver takes the PDF as the raw body (Content-Type
// application/pdf) and delivers the order. Nothing but the request line
// and headers is read before the media type and the Content-Length (the
// body gate, gateBody), the session (requireSession), the role and the
// order's state (CheckDelivery) and a slot of the node's upload bound are
// checked; then the body is streamed into the
// ordering service, which keeps it in a temporary file, never whole in
// memory, and stops it at MaxUploadSize.
func (h orderHandlers) handleDeliver(c *fiber.Ctx) error {
	s := h.s
	account, id := currentSession(c).account, utils.CopyString(c.Params("id"))
	if err := s.Orders.CheckDelivery(c.UserContext(), account, id); err != nil {
		return err
	}
	release, err := s.uploads.acquire(c, account)
	if err != nil {
		return err
	}
	defer release()
	body, _ := c.Locals(bodyKey{}).(*requestBody)
	o, err := s.Orders.Deliver(c.UserContext(), account, id, body)
	if err != nil {
		return err
	}
	return c.JSON(operatorOrderIn(sayingIn(c), o))
}
