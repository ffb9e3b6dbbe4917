# SPDX-License-Identifier: GPL-2.0-only
"""What a run is made of, as frozen data: the configs and workloads of the fabric (``fabric``), of RDMA
(``rdma``), of the DPA with its closed forms (``dpa``) and of collectives (``collectives``), their
canonical plain-data codec (``codec``) and the faults file reader (``faults_file``).

Nothing here loads C++: the configs are checked, compared, hashed and written out without ns-3;
the runs (mcsim.runs) build them through mcsim.native, the only caller of the C ABI.
"""
