// A run's energy figures; until the run has ended the API answers 409, shown as a note.
import { useCallback, useEffect, useState } from 'react';
import type { RunEnergy } from '../../types';
import { ApiError } from '../api';
import { useApi } from '../context';

export function useRunEnergy(id: string): { figures: RunEnergy | null; note: string | null; reload: () => void } {
  const api = useApi();
  const [energy, setEnergy] = useState<{ figures: RunEnergy | null; note: string | null }>({ figures: null, note: null });
  const load = useCallback(async () => {
    try {
      setEnergy({ figures: await api.get<RunEnergy>(`/v1/runs/${id}/energy`), note: null });
    } catch (e) {
      const why = e instanceof ApiError && e.status === 409 ? `Not ready yet: ${e.message}.` : (e as Error).message;
      setEnergy({ figures: null, note: why });
    }
  }, [api, id]);
  useEffect(() => { void load(); }, [load]);
  return { ...energy, reload: () => void load() };
}
