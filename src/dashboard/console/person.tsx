// A person in a console list: their name, linked to their console page, and their email (people, not ids).

export const Person = ({ id, name, email }: { id: number; name: string | null; email: string | null }) => (
  <span class="person">
    <a href={`/dashboard/console/users/${id}`}>{name ?? `#${id}`}</a> <span class="muted">{email}</span>
  </span>
);
