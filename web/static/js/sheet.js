// Tables as files: reading the CSV or TSV a person uploads or pastes, as
// "companydocs resolve" reads it, and writing it back with the columns of
// the result.

// detectComma picks the delimiter of a header line as the command line
// does: the most frequent of comma, semicolon and tab outside quotes.
function detectComma(line) {
  const counts = { ",": 0, ";": 0, "\t": 0 };
  let quoted = false;
  for (const c of line) {
    if (c === '"') {
      quoted = !quoted;
    } else if (!quoted && c in counts) {
      counts[c]++;
    }
  }
  let best = ",";
  for (const c of [";", "\t"]) {
    if (counts[c] > counts[best]) {
      best = c;
    }
  }
  return best;
}

// parseTable reads CSV text as Go's encoding/csv does with lazy quotes:
// "\r\n" is "\n", an empty line is skipped, "" in a quoted cell is ".
function parseTable(text, comma) {
  const rows = [];
  let row = [];
  let cell = "";
  let quoted = false;
  let started = false; // the line has a character
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"' && (i + 1 === text.length || text[i + 1] === comma || text[i + 1] === "\n")) {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c === '"' && cell === "") {
      quoted = true;
      started = true;
    } else if (c === comma) {
      row.push(cell);
      cell = "";
      started = true;
    } else if (c === "\n") {
      if (started || cell !== "") {
        row.push(cell);
        rows.push(row);
      }
      row = [];
      cell = "";
      started = false;
    } else {
      cell += c;
      started = true;
    }
  }
  if (started || cell !== "") {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

// readTable turns the text of a file or a paste into a header and rows
// as wide as the header.
export function readTable(text) {
  const bom = text.startsWith("\ufeff");
  text = (bom ? text.slice(1) : text).replace(/\r\n/g, "\n");
  const comma = detectComma(text.split("\n", 1)[0]);
  const all = parseTable(text, comma);
  if (all.length === 0) {
    return null;
  }
  const header = all[0].map((h) => h.trim());
  const rows = all.slice(1).map((r) => {
    r = r.slice();
    while (r.length > header.length && r[r.length - 1].trim() === "") {
      r.pop();
    }
    while (r.length < header.length) {
      r.push("");
    }
    return r;
  });
  return { header, rows, comma, bom };
}

// The columns "companydocs resolve" appends to each row, then the
// reviewer's: whether a person reviewed the row, chose its company by
// hand, or said that none of the candidates is meant ("none of these" is
// not "not found": the row had candidates).
export const RESULT_COLUMNS = ["profile_id", "name", "court", "registry_number", "confidence", "confidence_label",
  "ordering_eligible", "reasons", "reviewed", "chosen_by_hand", "none_of_these"];

const SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

function oneLine(s) {
  return s.split(SPACE).filter(Boolean).join(" ");
}

// number writes a decimal as the file's readers expect it: with a
// decimal comma in a file separated by semicolons (German spreadsheets
// read those), with a point otherwise.
function number(x, comma) {
  const s = String(x);
  return comma === ";" ? s.replace(".", ",") : s;
}

// resultCells are the result columns of a row: its outcome (the batch's
// answer) and the reviewer's choice (undefined: not reviewed; -1: none
// of these; k: the k-th candidate).
export function resultCells(outcome, choice, comma) {
  const reviewed = choice !== undefined;
  const review = [String(reviewed), String(reviewed && choice >= 0), String(reviewed && choice < 0)];
  if (outcome.error) {
    return ["", "", "", "", "", "", "", oneLine(outcome.error.code + ": " + outcome.error.message)].concat(review);
  }
  const c = reviewed ? (choice < 0 ? null : outcome.candidates[choice]) : outcome.candidates[0];
  if (!c) {
    // no candidate: the search's notes say why; "none of these" is said
    // by the review columns
    const notes = reviewed ? [] : ((outcome.query_understanding || {}).notes || []);
    return ["", "", "", "", "", "", "", oneLine(notes.join(" | "))].concat(review);
  }
  return [c.profile_id, c.name, c.court, c.registry_number, number(c.confidence, comma), c.confidence_label,
    String(c.ordering_eligible), oneLine((c.confidence_reasons || []).join(" | "))].concat(review);
}

// csvCell quotes a cell as Go's encoding/csv writer does.
function csvCell(s, comma) {
  const quote = s !== "" && (s === "\\." || s.includes(comma) || /["\r\n]/.test(s) || new RegExp("^" + SPACE.source).test(s));
  return quote ? '"' + s.replace(/"/g, '""') + '"' : s;
}

// tableCSV writes the table with the result columns, in its own
// delimiter, with its byte order mark when it had one.
export function tableCSV(table, outcomes, choices) {
  const line = (cells) => cells.map((c) => csvCell(c, table.comma)).join(table.comma) + "\n";
  let out = (table.bom ? "\ufeff" : "") + line(table.header.concat(RESULT_COLUMNS));
  outcomes.forEach((outcome, i) => {
    out += line(table.rows[i].concat(resultCells(outcome, choices[i], table.comma)));
  });
  return out;
}
