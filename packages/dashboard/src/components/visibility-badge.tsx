import { Icon } from './icons';

export function VisibilityBadge({ isPublic }: { isPublic: boolean }) {
  return isPublic ? (
    <span className="badge badge-public">
      <Icon name="globe" size={14} /> Public
    </span>
  ) : (
    <span className="badge badge-private">
      <Icon name="lock" size={14} /> Private
    </span>
  );
}
