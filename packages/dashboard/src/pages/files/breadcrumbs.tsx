import { Icon } from '../../components/icons';
import { Link } from '../../components/link';
import { crumbsOf, folderPagePath } from '../../lib/folders';

interface Props {
  bucketId: number;
  bucketName: string;
  folder: string;
}

/** Where you are in the bucket: the bucket itself, then each folder; every step but the last leads back. */
export function Breadcrumbs({ bucketId, bucketName, folder }: Props) {
  const crumbs = [{ name: bucketName, folder: '' }, ...crumbsOf(folder)];
  return (
    <nav className="breadcrumbs" aria-label="Folder path">
      <ol>
        {crumbs.map((crumb, index) => {
          const current = index === crumbs.length - 1;
          return (
            <li key={crumb.folder}>
              {index > 0 ? <Icon name="chevronRight" size={14} className="breadcrumb-sep" /> : null}
              {current ? (
                <span className="breadcrumb-current" aria-current="location">
                  {index === 0 ? <Icon name="bucket" size={16} /> : <Icon name="folder" size={16} />}
                  {crumb.name}
                </span>
              ) : (
                <Link to={folderPagePath(bucketId, crumb.folder)} className="breadcrumb-link">
                  {index === 0 ? <Icon name="bucket" size={16} /> : null}
                  {crumb.name}
                </Link>
              )}
            </li>
          );
        })}
      </ol>
    </nav>
  );
}
