/** Plain-text output helpers: lines on the command's stdout, aligned tables, timestamps. */

/** Where a command's results go: the process's stdout, or the writer runCli was given. */
export interface Output {
  print(line?: string): void;
  printJson(value: unknown): void;
  /** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
  printTable(header: string[], rows: string[][]): void;
}

export function outputTo(stdout: { write(text: string): unknown }): Output {
  const print = (line = '') => void stdout.write(`${line}\n`);
  return {
    print,
    printJson: (value) => print(JSON.stringify(value, null, 2)),
    printTable(header, rows) {
      const all = [header, ...rows];
      const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? '').length)));
      for (const row of all) {
        const cells = row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)));
        print(cells.join('  ').trimEnd());
      }
    },
  };
}

/** An ISO timestamp as `2026-11-22 04:30:12 UTC`; null as `never`. */
export function formatTime(iso: string | null): string {
  if (iso === null) return 'never';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
