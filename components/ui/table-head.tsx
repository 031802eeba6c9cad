/** A table's header row: the one look every table of the app shares. */
export function TableHead({ columns }: { columns: readonly string[] }) {
  return (
    <thead>
      <tr className="border-b border-zinc-300 dark:border-zinc-700">
        {columns.map((column) => (
          <th key={column} className="py-1.5 pr-3">
            {column}
          </th>
        ))}
      </tr>
    </thead>
  );
}
