import { useState } from 'react';
import type { StorageBucket } from '@pail/shared';
import { setVisibility } from '../../api/buckets';
import { Switch } from '../../components/switch';
import { useToast } from '../../hooks/toast';

interface Props {
  bucket: StorageBucket;
  onChanged: (bucket: StorageBucket) => void;
}

export function VisibilitySwitch({ bucket, onChanged }: Props) {
  const [busy, setBusy] = useState(false);
  const { notify } = useToast();

  const change = async (makePublic: boolean) => {
    setBusy(true);
    try {
      await setVisibility(bucket.id, makePublic ? 'public' : 'private');
      onChanged({ ...bucket, public: makePublic });
      notify(makePublic ? `${bucket.name} is now public: anyone with a file URL can download it` : `${bucket.name} is now private`);
    } catch (err) {
      notify(`Could not change visibility: ${err instanceof Error ? err.message : String(err)}`, 'error');
    } finally {
      setBusy(false);
    }
  };

  return (
    <Switch
      checked={bucket.public}
      onChange={(makePublic) => void change(makePublic)}
      disabled={busy}
      label={`Public access for ${bucket.name}`}
      text={bucket.public ? 'Public' : 'Private'}
    />
  );
}
