"""k-NN search on an ecpfs index: the first page, then the next pages of the same search.

    python python/examples/ecp_search.py
"""

import lakeseek

index = lakeseek.sample.ecp_index()  # or lakeseek.EcpIndex("s3://bucket/prefix/index")
print(index.info)
vector = [0.5] * index.info["dim"]

print(index.search(vector, 5))
search = index.query(vector)
for page in range(3):
    result = search.next(5)
    print(f"page {page}: ids {result.ids}")
print("cost:", index.stats())
